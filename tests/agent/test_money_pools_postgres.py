"""A budget pool on PostgreSQL shared by 20 sessions in 4 processes, spent mid-run: nothing is overspent
beyond what one call's cost passes its reservation by, per session, and the pool's total is the logged costs'."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_core import nanos
from effects import BudgetPools

CHILD = Path(__file__).with_name("_pool_child.py")
ROOT = Path(__file__).resolve().parents[2]
PROCESSES, SESSIONS = 4, 5
CAP, PER_CALL, CALL_COST = nanos("0.5"), nanos("0.01"), nanos("0.012")


@pytest.mark.slow
def test_a_pool_shared_by_twenty_sessions_in_four_processes_is_never_overspent(postgres_dsn: str) -> None:
    pool = f"tenant:{time.time_ns()}"  # a pool of its own on the shared server
    admin = BudgetPools.postgres(postgres_dsn, per_call=PER_CALL)
    admin.set_cap(pool, CAP)
    children = [
        subprocess.Popen(
            [sys.executable, str(CHILD), postgres_dsn, pool, str(p), str(SESSIONS)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in range(PROCESSES)
    ]
    results = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        results.extend(json.loads(line) for line in out.splitlines())
    totals = admin.totals(pool, time.time_ns() // 1_000_000)
    admin.close()

    assert len(results) == PROCESSES * SESSIONS
    assert {r["reason"] for r in results} == {"budget-pool"}  # every session ran until the pool refused it
    assert all(r["verdicts"][-1] is False and all(r["verdicts"][:-1]) for r in results)
    assert totals.held == 0
    assert totals.spent == sum(r["cost"] for r in results)  # the pool's total is the sum of the logged costs
    calls = sum(len(r["verdicts"]) - 1 for r in results)
    assert totals.spent == calls * CALL_COST
    # A call is granted only while what was spent and held leaves room for its reservation, so the cap
    # is passed only by what the calls running at the end cost beyond their reservations: at most one a session.
    assert CAP - PER_CALL < totals.spent <= CAP + PROCESSES * SESSIONS * (CALL_COST - PER_CALL)
