"""MachineCore driven synchronously, as a host without an event loop drives it."""

from collections.abc import Callable, Sequence

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from effects import (
    EffectCanceled,
    EffectCompleted,
    EffectFailed,
    EffectStarted,
    InputReceived,
    InputRejected,
    MachineCore,
    Plan,
    StateUpdated,
)

from ._counter import (
    Counter,
    Inc,
    Input,
    Refused,
    SetLimit,
    StartJob,
    StopJob,
    check,
    effects_at,
    strict_transition,
    transition,
)


def core(initial: Counter = Counter()) -> MachineCore[Counter, Input, str]:  # noqa: B008 - Counter is immutable
    return MachineCore(initial, transition, effects_at, check)


def strict_core(initial: Counter = Counter()) -> MachineCore[Counter, Input, str]:  # noqa: B008 - Counter is immutable
    """The same reducer refusing inputs by raising :class:`Refused` from ``transition`` (no ``check``)."""
    return MachineCore(initial, strict_transition, effects_at, rejects=Refused)


def test_a_batch_reports_each_input_then_one_reconciliation_against_the_final_state() -> None:
    c = core()
    result = c.apply([SetLimit(5), Inc(), Inc()])
    assert c.current() == Counter(count=2, limit=5)
    assert result.accepted == [
        (SetLimit(5), Counter(limit=5)),
        (Inc(), Counter(count=1, limit=5)),
        (Inc(), Counter(count=2, limit=5)),
    ]
    # Only the final state's effect starts: tick:0 and tick:1 were never derived by a reconciled state.
    assert result.plan == Plan(cancel=(), start=("tick:2",))
    assert result.starting == {"tick:2": "tick"}
    assert result.events == [
        InputReceived(input=SetLimit(5)),
        StateUpdated(input=SetLimit(5), state=Counter(limit=5)),
        InputReceived(input=Inc()),
        StateUpdated(input=Inc(), state=Counter(count=1, limit=5)),
        InputReceived(input=Inc()),
        StateUpdated(input=Inc(), state=Counter(count=2, limit=5)),
        EffectStarted(key="tick:2", effect="tick"),
    ]
    assert c.running_keys() == ("tick:2",)


def test_without_events_a_batch_does_the_same_and_reports_no_event() -> None:
    quiet, loud = core(), core()
    for batch in ([StartJob("a"), SetLimit(2), SetLimit(-1)], [StopJob("a"), Inc()]):
        silent, told = quiet.apply(batch, events=False), loud.apply(batch)
        assert silent.events == [] and told.events != []
        assert (silent.accepted, silent.rejected, silent.plan, silent.starting) == (
            told.accepted,
            told.rejected,
            told.plan,
            told.starting,
        )
    assert quiet.current() == loud.current() and quiet.running_keys() == loud.running_keys() == ("tick:1",)


def test_a_key_no_longer_derived_is_cancelled_with_a_reason() -> None:
    c = core()
    c.apply([StartJob("a"), StartJob("b")])
    result = c.apply([StopJob("a")])
    assert result.plan == Plan(cancel=("job:a",), start=())
    assert result.events[-1] == EffectCanceled(key="job:a", effect="a", reason="key no longer derived")
    assert c.running_keys() == ("job:b",)


def test_a_rejected_input_changes_nothing_and_is_reported() -> None:
    c = core(Counter(count=1))
    result = c.apply([SetLimit(-1), Inc()])
    assert result.rejected == [(SetLimit(-1), "limit must be >= 0, got -1")]
    assert result.events[0] == InputRejected(input=SetLimit(-1), rejection="limit must be >= 0, got -1")
    assert [inp for inp, _ in result.accepted] == [Inc()]
    assert c.current() == Counter(count=2)


def test_an_input_transition_refuses_with_a_rejects_type_changes_nothing_and_is_reported() -> None:
    c = strict_core(Counter(count=1))
    result = c.apply([SetLimit(-1), Inc(), StopJob("a")])
    assert result.rejected == [(SetLimit(-1), "limit must be >= 0, got -1"), (StopJob("a"), "job 'a' is not running")]
    assert result.events == [
        InputRejected(input=SetLimit(-1), rejection="limit must be >= 0, got -1"),
        InputReceived(input=Inc()),
        StateUpdated(input=Inc(), state=Counter(count=2)),
        InputRejected(input=StopJob("a"), rejection="job 'a' is not running"),
    ]
    assert [inp for inp, _ in result.accepted] == [Inc()]
    assert c.current() == Counter(count=2)


def test_with_rejects_each_input_is_folded_once() -> None:
    folded: list[Input] = []

    def counting(state: Counter, inp: Input) -> Counter:
        folded.append(inp)
        return strict_transition(state, inp)

    c: MachineCore[Counter, Input, str] = MachineCore(Counter(), counting, effects_at, rejects=Refused)
    c.apply([Inc(), SetLimit(-1), StartJob("a")])
    assert folded == [Inc(), SetLimit(-1), StartJob("a")]


def test_rejects_takes_a_tuple_and_an_error_without_a_rejection_is_the_rejection_itself() -> None:
    def picky(state: Counter, inp: Input) -> Counter:
        if isinstance(inp, StartJob) and not inp.name:
            raise ValueError("a job needs a name")
        return strict_transition(state, inp)

    c: MachineCore[Counter, Input, str] = MachineCore(Counter(), picky, effects_at, rejects=(Refused, ValueError))
    result = c.apply([StartJob(""), StopJob("x"), StartJob("a")])
    (first, error), (second, rejection) = result.rejected
    assert (first, type(error), str(error)) == (StartJob(""), ValueError, "a job needs a name")
    assert (second, rejection) == (StopJob("x"), "job 'x' is not running")
    assert c.current() == Counter(jobs=("a",))


def test_an_exception_not_in_rejects_propagates_and_nothing_is_applied() -> None:
    def explode(state: Counter, inp: Input) -> Counter:
        if isinstance(inp, StopJob):
            raise KeyError(inp.name)
        return strict_transition(state, inp)

    c: MachineCore[Counter, Input, str] = MachineCore(Counter(), explode, effects_at, rejects=Refused)
    with pytest.raises(KeyError):
        c.apply([Inc(), SetLimit(-1), StopJob("a")])
    assert c.current() == Counter()


def test_check_is_asked_before_transition_and_both_can_refuse() -> None:
    def no_big_steps(state: Counter, inp: Input) -> str | None:
        return "steps of at most 5" if isinstance(inp, Inc) and inp.by > 5 else None

    c: MachineCore[Counter, Input, str] = MachineCore(
        Counter(), strict_transition, effects_at, no_big_steps, rejects=Refused
    )
    result = c.apply([Inc(by=9), SetLimit(-1), Inc(by=2)])
    assert result.rejected == [(Inc(by=9), "steps of at most 5"), (SetLimit(-1), "limit must be >= 0, got -1")]
    assert c.current() == Counter(count=2)


def test_rejects_must_be_exception_types() -> None:
    with pytest.raises(TypeError) as raised:
        MachineCore(Counter(), transition, effects_at, rejects=("Refused",))  # type: ignore[arg-type]
    assert str(raised.value) == (
        "rejects= expects an exception type or a tuple of them (e.g. rejects=InvalidInput), got ('Refused',)"
    )


def test_an_ended_effect_is_not_restarted_until_its_key_stops_being_derived() -> None:
    c = core()
    c.apply([StartJob("a")])
    error = ValueError("boom")
    assert c.effect_ended("job:a", error) == EffectFailed(key="job:a", effect="a", error=error)
    assert c.running_keys() == ()
    assert c.ended_keys() == ("job:a",)
    assert c.apply([Inc()]).plan == Plan()  # still derived, already ended: not restarted
    assert c.apply([StopJob("a")]).plan == Plan()  # no longer derived: forgotten
    assert c.ended_keys() == ()
    assert c.apply([StartJob("a")]).plan == Plan(start=("job:a",))


def test_effect_ended_reports_completion_or_failure_once() -> None:
    c = core()
    c.apply([StartJob("a"), StartJob("b")])
    error = ValueError("boom")
    assert c.effect_ended("job:a") == EffectCompleted(key="job:a", effect="a")
    failed = c.effect_ended("job:b", error)
    assert isinstance(failed, EffectFailed)
    assert failed.error is error
    assert c.effect_ended("job:a") is None  # not running any more: no news


def test_without_events_an_end_is_recorded_the_same_and_no_event_is_built() -> None:
    c = core()
    c.apply([StartJob("a")])
    assert c.effect_ended("job:a", events=False) is None
    assert c.running_keys() == ()
    assert c.ended_keys() == ("job:a",)
    assert c.apply([]).starting == {}  # ended while derived: not restarted


def test_the_end_of_a_cancelled_effect_is_no_news() -> None:
    c = core()
    c.apply([StartJob("a")])
    c.apply([StopJob("a")])
    assert c.effect_ended("job:a") is None


def test_apply_without_inputs_reconciles_the_current_state() -> None:
    c = core(Counter(limit=1, jobs=("a",)))
    result = c.apply([])
    assert result.plan == Plan(start=("job:a", "tick:0"))
    assert c.apply([]).plan == Plan()


def test_stop_cancels_everything_and_a_later_apply_resumes() -> None:
    c = core()
    c.apply([StartJob("a"), StartJob("b")])
    c.effect_ended("job:b")
    assert c.stop() == [EffectCanceled(key="job:a", effect="a", reason="machine stopped")]
    assert c.running_keys() == ()
    assert c.apply([]).plan == Plan(start=("job:a", "job:b"))


class Recorder:
    def __init__(self, fail: bool = False) -> None:
        self.batches: list[list[Input]] = []
        self.states: list[list[Counter]] = []
        self.fail = fail

    def append(self, inputs: Sequence[Input], states: Sequence[Counter], /) -> None:
        if self.fail:
            raise OSError("disk full")
        self.batches.append(list(inputs))
        self.states.append(list(states))


@pytest.mark.parametrize("make", [core, strict_core], ids=["check", "rejects"])
def test_the_journal_gets_the_accepted_inputs_of_each_batch_with_the_state_after_each(
    make: Callable[[], MachineCore[Counter, Input, str]],
) -> None:
    c = make()
    journal = Recorder()
    result = c.apply([Inc(), SetLimit(-1), Inc(by=2)], journal=journal)
    c.apply([SetLimit(-2)], journal=journal)  # nothing accepted: no call
    assert journal.batches == [[Inc(), Inc(by=2)]]
    assert journal.states == [[Counter(count=1), Counter(count=3)]]
    assert journal.states == [[state for _, state in result.accepted]]


def test_a_failing_journal_leaves_the_core_unchanged() -> None:
    c = core()
    with pytest.raises(OSError, match="disk full"):
        c.apply([StartJob("a")], journal=Recorder(fail=True))
    assert c.current() == Counter()
    assert c.running_keys() == ()


def test_a_failing_transition_leaves_the_core_unchanged() -> None:
    def explode(state: Counter, inp: Input) -> Counter:
        if isinstance(inp, StopJob):
            raise KeyError(inp.name)
        return transition(state, inp)

    c: MachineCore[Counter, Input, str] = MachineCore(Counter(), explode, effects_at)
    with pytest.raises(KeyError):
        c.apply([Inc(), StopJob("a")])
    assert c.current() == Counter()


def test_apply_from_inside_a_batch_is_refused() -> None:
    holder: list[MachineCore[Counter, Input, str]] = []

    def reentrant(state: Counter, inp: Input) -> Counter:
        holder[0].apply([Inc()])
        return state

    holder.append(MachineCore(Counter(), reentrant, effects_at))
    with pytest.raises(RuntimeError, match="queue the input and apply it after this batch returns"):
        holder[0].apply([Inc()])


def test_follow_up_inputs_join_the_batch_that_accepted_an_input_before_the_journal_and_the_reconciliation() -> None:
    asked: list[tuple[Counter, Counter]] = []

    def follow_up(before: Counter, after: Counter) -> list[Input]:
        """A batch that adds jobs announces them: one ``Inc`` (and a negative limit, refused)."""
        asked.append((before, after))
        return [Inc(), SetLimit(-1)] if len(after.jobs) > len(before.jobs) else []

    c: MachineCore[Counter, Input, str] = MachineCore(Counter(), transition, effects_at, check, follow_up=follow_up)
    journal = Recorder()
    result = c.apply([StartJob("a"), SetLimit(3)], journal=journal)
    assert asked == [(Counter(), Counter(limit=3, jobs=("a",)))]  # once, with the states around the batch
    assert journal.batches == [[StartJob("a"), SetLimit(3), Inc()]]
    assert result.rejected == [(SetLimit(-1), "limit must be >= 0, got -1")]
    assert c.current() == Counter(count=1, limit=3, jobs=("a",))
    assert result.starting == {"job:a": "a", "tick:1": "tick"}  # derived from the state after the follow-up
    assert result.events[-5:-2] == [
        InputReceived(input=Inc()),
        StateUpdated(input=Inc(), state=Counter(count=1, limit=3, jobs=("a",))),
        InputRejected(input=SetLimit(-1), rejection="limit must be >= 0, got -1"),
    ]
    c.apply([SetLimit(-2)], journal=journal)  # nothing accepted: not asked
    c.apply([])  # nothing to apply (a resume's reconciliation): not asked
    c.apply([SetLimit(4)], journal=journal, reconcile=False)  # a machine stopping starts nothing: not asked
    assert len(asked) == 1
    assert journal.batches[1:] == [[SetLimit(4)]]


class CoreProperty(RuleBasedStateMachine):
    """Random inputs and random effect endings: the running set always matches what the state derives."""

    strict = False

    def __init__(self) -> None:
        super().__init__()
        self.core = strict_core() if self.strict else core()
        self.log: list[Input] = []

    @rule(
        batch=st.lists(
            st.one_of(
                st.builds(Inc, st.integers(-2, 2)),
                st.builds(SetLimit, st.integers(-1, 6)),
                st.builds(StartJob, st.sampled_from("abc")),
                st.builds(StopJob, st.sampled_from("abc")),
            ),
            max_size=4,
        )
    )
    def apply(self, batch: list[Input]) -> None:
        result = self.core.apply(batch)
        self.log.extend(inp for inp, _ in result.accepted)
        for inp, state in result.accepted:
            assert isinstance(state, Counter) and inp in batch

    @rule(data=st.data(), fail=st.booleans())
    def end_one(self, data: st.DataObject, fail: bool) -> None:
        running = self.core.running_keys()
        if running:
            key = data.draw(st.sampled_from(running))
            event = self.core.effect_ended(key, ValueError(key) if fail else None)
            assert isinstance(event, EffectFailed if fail else EffectCompleted)

    @invariant()
    def running_matches_derived(self) -> None:
        wanted = effects_at(self.core.current())
        running = set(self.core.running_keys())
        ended = set(self.core.ended_keys())
        assert running <= set(wanted)
        assert set(wanted) == running | ended
        assert running.isdisjoint(ended)

    @invariant()
    def state_is_the_fold_of_the_log(self) -> None:
        state = Counter()
        for inp in self.log:
            state = transition(state, inp)
        assert self.core.current() == state


class StrictCoreProperty(CoreProperty):
    """The same property with inputs refused by ``transition`` raising (``rejects=``) instead of ``check``."""

    strict = True


TestCoreProperty = CoreProperty.TestCase
TestCoreProperty.settings = settings(max_examples=60, stateful_step_count=25)
TestStrictCoreProperty = StrictCoreProperty.TestCase
TestStrictCoreProperty.settings = settings(max_examples=30, stateful_step_count=25)
