"""``TrialLedger.unused`` (kept from where it last looked) equals testing every assignment, after
any mix of new Trials, removed Trials, ledgers advanced by ``updated``, and assignment lists
that grow, shrink or change in the middle."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.fake.clone import clone
from katib_resume.adapters.fake.codec import encode
from katib_resume.core.model.trial import Trial
from katib_resume.core.trial_ledger import TrialLedger

NAMES = [f"t{i}" for i in range(8)]
FEW = NAMES[:4]  # few names, so that the same name is given, taken and freed again


def _trial(name: str) -> Trial:
    return Trial.model_validate({"metadata": {"name": name}, "status": {"conditions": []}})


def _from_scratch(
    assignments: tuple[dict[str, Any], ...], live: set[str], wanted: int
) -> list[dict[str, Any]]:
    return [a for a in assignments if str(a.get("name")) not in live][:wanted]


steps = st.lists(
    st.one_of(
        st.tuples(st.just("trial"), st.sampled_from(FEW)),
        st.tuples(st.just("remove"), st.sampled_from(FEW)),
        st.tuples(st.just("assign"), st.sampled_from(FEW)),
        st.tuples(st.just("truncate"), st.integers(0, 8)),
        st.tuples(st.just("change"), st.sampled_from(FEW)),
        st.tuples(st.just("ask"), st.integers(0, 4)),
    ),
    min_size=10,
    max_size=40,
)


@given(steps, st.booleans())
def test_unused_equals_testing_every_assignment(
    history: list[tuple[str, Any]], advance_by_update: bool
) -> None:
    ledger = TrialLedger(None)
    live: set[str] = set()
    assignments: tuple[dict[str, Any], ...] = ()
    for step, arg in history:
        if step in ("trial", "remove"):
            trial = _trial(arg) if step == "trial" else None
            if advance_by_update:
                ledger = ledger.updated([trial] if trial else [], [] if trial else [arg])
            else:
                ledger.fold(arg, trial)
            live.add(arg) if trial else live.discard(arg)
        elif step == "assign":  # the Suggestion's next version: the old items, one more
            assignments = (*assignments, {"name": arg, "parameterAssignments": []})
        elif step == "truncate":
            assignments = assignments[:arg]
        elif step == "change" and assignments:
            middle = len(assignments) // 2
            changed = {"name": arg, "parameterAssignments": [{"name": "x", "value": "1"}]}
            assignments = (*assignments[:middle], changed, *assignments[middle + 1 :])
        for wanted in (arg if step == "ask" else 1, 3):
            assert ledger.unused(assignments, wanted) == _from_scratch(assignments, live, wanted)


def test_unused_resumes_where_it_last_looked() -> None:
    ledger = TrialLedger.of(None, [_trial(n) for n in NAMES[:5]])
    assignments = tuple({"name": n} for n in NAMES)
    assert ledger.unused(assignments, 2) == [{"name": "t5"}, {"name": "t6"}]
    ledger.fold("t5", _trial("t5"))
    longer = (*assignments, {"name": "t9"})
    assert ledger.unused(longer, 5) == [{"name": "t6"}, {"name": "t7"}, {"name": "t9"}]
    # a list changed before where it last looked is looked at from the start again
    changed = ({"name": "t8"}, *longer[1:])
    assert ledger.unused(changed, 1) == [{"name": "t8"}]
    assert ledger.unused(longer, 1) == [{"name": "t6"}]
    ledger.fold("t1", None)  # its assignment is free again
    assert ledger.unused(longer, 1) == [{"name": "t1"}]


ODD = [*FEW, 'q"t', "é"]  # names the stored texts escape, or write in UTF-8


def _stored(items: tuple[dict[str, Any], ...]) -> Chained:
    return Chained.of(Texts([encode(item) for item in items]), len(items))


@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("trial"), st.sampled_from(ODD)),
            st.tuples(st.just("remove"), st.sampled_from(ODD)),
            st.tuples(st.just("assign"), st.sampled_from(ODD)),
            st.tuples(st.just("store"), st.sampled_from(ODD)),
            st.tuples(st.just("copy"), st.just(0)),
            st.tuples(st.just("truncate"), st.integers(0, 8)),
            st.tuples(st.just("ask"), st.integers(0, 4)),
        ),
        min_size=10,
        max_size=40,
    )
)
def test_unused_of_a_history_left_undecoded_equals_testing_every_assignment(
    history: list[tuple[str, Any]],
) -> None:
    """The Suggestion's history as a writer's store holds it (``chained.py``): extended by
    each batch (``assign``), stored anew (``store``: new texts), copied, cut. ``unused`` reads
    its names from the texts and returns what testing every decoded assignment returns."""
    ledger = TrialLedger(None)
    live: set[str] = set()
    held = _stored(())
    for step, arg in history:
        if step in ("trial", "remove"):
            ledger.fold(arg, _trial(arg) if step == "trial" else None)
            live.add(arg) if step == "trial" else live.discard(arg)
        elif step == "assign":
            held = held.extended([{"name": arg, "parameterAssignments": []}])
        elif step == "store":
            held = _stored((*held, {"name": arg, "parameterAssignments": []}))
        elif step == "copy":
            held = clone(held)
        elif step == "truncate":
            held = held[:arg]
        for wanted in (arg if step == "ask" else 1, 3):
            expected = _from_scratch(tuple(held), live, wanted)
            assert ledger.unused(held, wanted) == expected
