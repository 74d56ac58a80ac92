"""The table of input kinds is the single source: every tag appears in every table built from it."""

from __future__ import annotations

import pytest

import agent_core as ac
import agent_core.testing
from agent_core.testing._builders import BUILDERS
from agent_core.testing._kinds import BY_TAG
from agent_core.testing._next import _WEIGHTS
from agent_core.testing._per_kind import per_kind

TAGS = set(ac.INPUT_TAGS)


def test_the_table_has_one_row_per_input_class_in_the_designs_order() -> None:
    assert tuple(kind.tag for kind in ac.INPUT_KINDS) == ac.INPUT_TAGS
    assert {kind.type for kind in ac.INPUT_KINDS} == set(ac.AgentInput.__args__)  # type: ignore[attr-defined]


def test_every_tag_appears_in_every_table() -> None:
    assert set(ac.WRITE_SETS) == TAGS
    assert set().union(*ac.VALID_INPUTS.values()) == TAGS
    assert set(ac.VALID_INPUTS) == set(ac.Phase)
    assert set(BY_TAG) == TAGS
    assert set(BUILDERS) == TAGS
    assert {tag for tag, _ in _WEIGHTS} == TAGS
    for tag in TAGS:
        assert callable(getattr(agent_core.testing, tag.replace("-", "_")))


def test_each_kind_is_dispatched_to_its_own_handler() -> None:
    # The handler of a kind is the module named after its tag: on_<tag with underscores>.
    for kind in ac.INPUT_KINDS:
        assert kind.handler.__name__ == "on_" + kind.tag.replace("-", "_")


def test_every_write_set_holds_timestamp_and_step_and_only_state_fields() -> None:
    fields = set(ac.AgentState.__struct_fields__)
    for tag, writes in ac.WRITE_SETS.items():
        assert {"timestamp", "step"} <= writes <= fields, tag


def test_a_testing_table_missing_a_kind_fails_at_import_naming_it() -> None:
    partial = {kind.type: 1 for kind in ac.INPUT_KINDS if kind.type is not ac.TimerFired}
    with pytest.raises(TypeError) as caught:
        per_kind({**partial, int: 1}, "weights")  # type: ignore[dict-item]
    assert str(caught.value) == (
        "the testing kit's weights must have one entry per input kind; missing: TimerFired; not input kinds: int"
    )
