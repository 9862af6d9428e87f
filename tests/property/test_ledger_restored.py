"""``TrialLedger.restored`` builds in bulk the ledger that remembering each record of distinct
Trials in turn builds: the same counts and name lists, the same optimal Trial (ties to the
smallest name), the same records, and a ledger that folds on from there as the other does."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.trial_ledger import TrialLedger, TrialRecord
from katib_resume.core.trial_phases import TrialPhase

_NAMES = st.sampled_from([f"t{i}" for i in range(12)])
_KEYS = st.one_of(
    st.none(), st.sampled_from([0.0, 1.0, -1.0, 0.5]), st.floats(allow_nan=True, width=32)
)
_RECORDS = st.lists(
    st.builds(
        TrialRecord,
        _NAMES,
        st.sampled_from(list(TrialPhase)),
        _KEYS,
        st.lists(st.fixed_dictionaries({"name": st.just("lr"), "value": st.text(max_size=3)})).map(
            tuple
        ),
        st.lists(
            st.fixed_dictionaries({"name": st.just("loss"), "latest": st.text(max_size=3)})
        ).map(tuple),
    ),
    max_size=30,
    unique_by=lambda record: record.name,
)


def _one_by_one(records: list[TrialRecord]) -> TrialLedger:
    ledger = TrialLedger(None, None)
    for record in records:
        ledger._remember(record)
    return ledger


def _same_key(a: float | None, b: float | None) -> bool:
    return a == b or (a is not None and b is not None and math.isnan(a) and math.isnan(b))


@given(_RECORDS)
def test_a_bulk_restore_is_the_ledger_of_each_record_remembered(records: list[TrialRecord]) -> None:
    bulk, each = TrialLedger.restored(None, records, None), _one_by_one(records)
    assert bulk.counts == each.counts
    assert {r.name: r for r in bulk.records()}.keys() == {r.name: r for r in each.records()}.keys()
    for mine, theirs in zip(
        sorted(bulk.records(), key=lambda r: r.name),
        sorted(each.records(), key=lambda r: r.name),
        strict=True,
    ):
        assert (mine.name, mine.phase, mine.assignments) == (
            theirs.name,
            theirs.phase,
            theirs.assignments,
        )
        assert _same_key(mine.key, theirs.key)
    best, expected = bulk.optimal, each.optimal
    assert (best is None) == (expected is None)
    if best is not None and expected is not None:
        assert best.name == expected.name
    assert bulk.current_optimal_trial() == each.current_optimal_trial() or best is None


@given(_RECORDS, _NAMES)
def test_a_bulk_restored_ledger_folds_on_as_the_other(
    records: list[TrialRecord], gone: str
) -> None:
    bulk, each = TrialLedger.restored(None, records, None), _one_by_one(records)
    bulk.fold(gone, None)
    each.fold(gone, None)
    assert bulk.counts == each.counts
    assert (bulk.optimal and bulk.optimal.name) == (each.optimal and each.optimal.name)


def test_unique_finite_records_are_sorted_by_phase_and_ranked() -> None:
    records = [
        TrialRecord("b", TrialPhase.SUCCEEDED, 2.0),
        TrialRecord("a", TrialPhase.SUCCEEDED, 2.0),
        TrialRecord("c", TrialPhase.FAILED, None),
        TrialRecord("d", TrialPhase.SUCCEEDED, 3.0),
    ]
    ledger = TrialLedger.restored(None, records, None)
    assert ledger.counts.succeeded_trials == ("a", "b", "d")
    assert ledger.counts.failed_trials == ("c",)
    assert ledger.optimal == records[1]  # the tie goes to the smaller name


def test_a_trial_named_twice_keeps_its_last_record() -> None:
    first, last = (
        TrialRecord("a", TrialPhase.RUNNING, None),
        TrialRecord("a", TrialPhase.SUCCEEDED, 1.0),
    )
    ledger = TrialLedger.restored(None, [first, last], None)
    assert ledger.records() == (last,)
    assert ledger.counts.succeeded_trials == ("a",) and not ledger.counts.running_trials
    assert ledger.optimal == last
