"""The ``replay --verify`` result, as the viewer shows it: verified counts, or the first divergence."""

from __future__ import annotations

from typing import Any

from .._store import EventStore, LogDamaged, ReplayDiverged, replay_session


def verify_view(store: EventStore, session_id: str) -> dict[str, Any]:
    """Replay the session from its first record, comparing the recorded hashes; never raises for a bad log."""
    try:
        report = replay_session(store, session_id, verify=True)
    except ReplayDiverged as error:
        fields = ("record", "input_type", "kind", "expected", "actual")
        return {"ok": False, "divergence": {f: getattr(error, f) for f in fields}, "message": str(error)}
    except LogDamaged as error:
        return {"ok": False, "divergence": None, "message": str(error)}
    return {
        "ok": True,
        "records": report.records,
        "turns_checked": report.turns_checked,
        "states_checked": report.states_checked,
        "state_hash": report.state_hash,
    }
