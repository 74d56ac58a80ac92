"""The sans-I/O reconciler: a plain function over key sets."""

from hypothesis import given
from hypothesis import strategies as st

from effects import Plan, reconcile


def test_nothing_to_do_when_running_is_wanted() -> None:
    plan = reconcile(["a", "b"], {"b": 2, "a": 1})
    assert plan == Plan(cancel=(), start=())
    assert not plan


def test_cancels_in_running_order_and_starts_in_wanted_order() -> None:
    plan = reconcile(["x", "a", "y", "z"], {"c": 3, "a": 1, "b": 2})
    assert plan == Plan(cancel=("x", "y", "z"), start=("c", "b"))
    assert plan


def test_from_nothing_starts_everything_in_wanted_order() -> None:
    assert reconcile([], {"t:2": 0, "t:1": 0}) == Plan(cancel=(), start=("t:2", "t:1"))


def test_to_nothing_cancels_everything() -> None:
    assert reconcile(("a", "b"), {}) == Plan(cancel=("a", "b"), start=())


def test_a_key_still_wanted_keeps_running_even_if_its_value_changed() -> None:
    assert reconcile({"a": "old"}, {"a": "new"}) == Plan()


def test_accepts_a_generator_of_running_keys() -> None:
    assert reconcile((k for k in ["a", "b"]), {"b": 0, "c": 0}) == Plan(cancel=("a",), start=("c",))


keys = st.text(alphabet="abcdef:", min_size=1, max_size=3)


@given(running=st.lists(keys, unique=True), wanted=st.dictionaries(keys, st.integers()))
def test_applying_the_plan_gives_exactly_the_wanted_keys_in_a_stable_order(
    running: list[str], wanted: dict[str, int]
) -> None:
    plan = reconcile(running, wanted)
    after = [k for k in running if k not in plan.cancel] + list(plan.start)
    assert sorted(after) == sorted(wanted)
    assert len(after) == len(set(after))
    # Stable: cancellations keep running's order, starts keep wanted's order, and nothing is touched twice.
    assert list(plan.cancel) == [k for k in running if k not in wanted]
    assert list(plan.start) == [k for k in wanted if k not in running]
    assert set(plan.cancel).isdisjoint(plan.start)
    assert reconcile(running, wanted) == plan
    assert reconcile(after, wanted) == Plan()
