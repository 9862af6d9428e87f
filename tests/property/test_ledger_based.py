"""``TrialLedger.based`` is the ledger ``TrialLedger.restored`` makes of its base's records,
and reads them only when an operation needs one.

A base (or several joined, as the blocks of one Experiment are) is made of drawn records: a
name may be given twice, a key may be missing, NaN or infinite, keys tie. The ledger based on
it and the ledger restored from the same records then take the same drawn operations (folds and
removals of base Trials and of others, ``updated``, ``advance`` with Trials that are not the
Experiment's, ``record``, ``records``) and give the same answer to every public question after
each one. The base's ``records`` is counted: it is called once, by the first operation that
needs a record of the base (all of them, one that is not the best, a fold of a base Trial, or
a rescan after the best Trial got worse or went), and never before.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from math import isnan
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.core import trial_ledger
from katib_resume.core.katib import LABEL_EXPERIMENT
from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.model.trial import Trial
from katib_resume.core.trial_ledger import (
    LedgerBase,
    TrialLedger,
    TrialRecord,
    advance,
    basis_of,
)
from katib_resume.core.trial_phases import TrialPhase
from katib_resume.core.trials import TrialCounts, is_own
from tests.unit.test_trials import experiment

NAMES = [f"t{i}" for i in range(10)]
"""The names of the bases' records."""
NEW = ["new0", "new1", "new2"]
"""The names of the Trials that are in no base, as those made after a restart."""
ASKED = [*NAMES, *NEW, "other"]
EXPERIMENT = experiment()
BASIS = basis_of(EXPERIMENT)
SUCCEEDED, FAILED, NAN = TrialPhase.SUCCEEDED, TrialPhase.FAILED, float("nan")
ASSIGNMENTS = tuple({"name": name} for name in ASKED)

objectives = st.sampled_from(
    [
        None,
        ObjectiveSpec(type="minimize", objective_metric_name="loss", goal=0.5),
        ObjectiveSpec(type="maximize", objective_metric_name="loss", goal=0.5),
        ObjectiveSpec(type="minimize", objective_metric_name="loss"),
    ]
)
# keys that tie with each other and with the Trials' values (0.1, 0.5, 0.9, negated when
# maximized: so a new Trial often beats the bases' best), infinite ones, now and then a NaN
keys = st.sampled_from(
    [*(None, 0.1, 0.5, 0.9, float("inf")) * 4, -0.5, -0.9, float("-inf"), float("nan")]
)
records = st.builds(
    TrialRecord,
    st.sampled_from(NAMES),
    st.sampled_from(list(TrialPhase)),
    keys,
    st.sampled_from([(), ({"name": "lr", "value": "0.1"},)]),
    st.sampled_from([(), ({"name": "loss", "latest": "0.1"},)]),
)


@st.composite
def bases(draw: st.DrawFn) -> list[list[TrialRecord]]:
    """The records of one to three bases: a name is in one base only (a Trial is sealed in
    one block), maybe twice."""
    drawn, count = draw(st.lists(records, max_size=12)), draw(st.integers(1, 3))
    part_of = draw(st.lists(st.integers(0, count - 1), min_size=len(NAMES), max_size=len(NAMES)))
    return [[r for r in drawn if part_of[NAMES.index(r.name)] == part] for part in range(count)]


PHASES = ["Succeeded", "Failed", "Running", "Killed", None]
VALUES = ["0.1", "0.5", "0.9", "unavailable", None]
Operation = tuple[str, Any]


def _changes(names: list[str]) -> st.SearchStrategy[Operation]:
    """A fold, an ``updated`` or an ``advance`` of Trials named from ``names``: a change is a
    name and the Trial's phase, objective value and whether it is the Experiment's (None: the
    Trial is removed)."""
    trial = st.tuples(st.sampled_from(PHASES), st.sampled_from(VALUES), st.booleans())
    change = st.tuples(st.sampled_from(names), st.one_of(st.none(), trial))
    folds = st.tuples(st.just("fold"), st.lists(change, min_size=1, max_size=1))
    batches = st.tuples(st.sampled_from(["updated", "advance"]), st.lists(change, max_size=3))
    return st.one_of(folds, batches)


reads = st.one_of(
    st.tuples(st.just("record"), st.sampled_from(ASKED)), st.tuples(st.just("records"), st.none())
)
# changes of any Trial, a base's or another, and now and then records read
operations = st.lists(st.one_of(_changes([*NEW, *NAMES]), _changes(NEW), reads), max_size=12)
# changes of the Trials in no base (a restart's new ones) only: a rescan of the best reads
new_operations = st.lists(_changes(NEW), max_size=12)


def _trial(name: str, phase: str | None, value: str | None, own: bool) -> Trial:
    status: dict[str, Any] = {"conditions": [{"type": phase, "status": "True"}] if phase else []}
    if value is not None:
        metric = {"name": "loss", "min": value, "max": value, "latest": value}
        status["observation"] = {"metrics": [metric]}
    labels = {LABEL_EXPERIMENT: "exp" if own else "another"}
    metadata = {"name": name, "namespace": "kubeflow", "labels": labels}
    spec = {"parameterAssignments": [{"name": "lr", "value": name}]}
    return Trial.model_validate({"metadata": metadata, "spec": spec, "status": status})


class Counted:
    """A base's records, decoded afresh on each call (new tuples), the calls counted."""

    def __init__(self, records: list[TrialRecord]) -> None:
        self.given, self.calls = records, 0

    def __call__(self) -> Iterator[TrialRecord]:
        self.calls += 1
        return (record._replace() for record in self.given)


def _counted(records: list[TrialRecord]) -> tuple[LedgerBase, Counted]:
    made, counted = LedgerBase.of(records), Counted(records)
    return LedgerBase(made.names, made.best, counted), counted


def _answers(ledger: TrialLedger, objective: ObjectiveSpec | None) -> tuple[object, ...]:
    """Every public answer that needs no record of a base."""
    return (
        ledger.basis,
        ledger.counts,
        ledger.optimal,
        ledger.current_optimal_trial(),
        ledger.goal_reached(objective),
        [ledger.has(name) for name in ASKED],
        [ledger.unused(ASSIGNMENTS[:size], 4) for size in (3, len(ASSIGNMENTS))],
        ledger.unused(ASSIGNMENTS, len(ASSIGNMENTS)),
    )


def _call(ledger: TrialLedger, kind: str, trials: list[Trial], removed: list[str]) -> TrialLedger:
    if kind == "fold":
        trial = trials[0] if trials else None
        ledger.fold(trial.metadata.name if trial else removed[0], trial)
        return ledger
    if kind == "updated":
        return ledger.updated(trials, removed)
    moved = advance(ledger, EXPERIMENT, trials, removed)
    assert moved is not None
    return moved


def _folds(kind: str, trials: list[Trial], removed: list[str]) -> list[tuple[str, Trial | None]]:
    """The folds ``_call`` makes, in order: removals first, and for ``advance`` a Trial that is
    not the Experiment's is a removal."""
    if kind == "advance":
        removed = [*removed, *(t.metadata.name for t in trials if not is_own(EXPERIMENT, t))]
        trials = [trial for trial in trials if is_own(EXPERIMENT, trial)]
    return [*((name, None) for name in removed), *((t.metadata.name, t) for t in trials)]


def _needs_a_record(
    restored: TrialLedger, folds: list[tuple[str, Trial | None]], based: frozenset[str]
) -> bool:
    """Whether the folds need a record of the base: one of them is a base Trial's, or makes
    the ledger look for its best again (the best Trial goes, loses its value or gets worse)."""
    for name, trial in folds:
        best = restored.optimal
        restored = restored.updated([trial] if trial else [], [] if trial else [name])
        if name in based:
            return True
        if best is not None and best.name == name:
            after = restored.record(name)
            if (
                after is None
                or after.key is None
                or (best.key is not None and after.key > best.key)
            ):
                return True
    return False


def _unranked(records: list[TrialRecord]) -> bool:
    """Whether ``restored`` ranks a record whose key is NaN best (it came first)."""
    best = TrialLedger.restored(None, records, None).optimal
    return best is not None and best.key is not None and isnan(best.key)


@settings(max_examples=300)
@given(objectives, bases(), operations)
def test_a_based_ledger_answers_as_the_one_restored_from_its_records(
    objective: ObjectiveSpec | None, parts: list[list[TrialRecord]], history: list[Operation]
) -> None:
    _hold(objective, parts, history)


@settings(max_examples=200)
@given(objectives, bases(), new_operations)
def test_a_based_ledger_changed_in_new_trials_reads_its_base_only_to_rescan(
    objective: ObjectiveSpec | None, parts: list[list[TrialRecord]], history: list[Operation]
) -> None:
    _hold(objective, parts, history)


def _hold(
    objective: ObjectiveSpec | None, parts: list[list[TrialRecord]], history: list[Operation]
) -> None:
    """Play ``history`` on the ledger based on ``parts`` and on the one restored from their
    records, comparing every answer and counting the reads of the base after each step."""
    counted = [_counted(records) for records in parts]
    base = LedgerBase.joined(made for made, _ in counted)
    ledger = TrialLedger.based(objective, base, BASIS)
    restored = TrialLedger.restored(objective, chain.from_iterable(parts), BASIS)
    names = frozenset(record.name for record in chain.from_iterable(parts))
    best = restored.optimal.name if restored.optimal else None  # the base's best
    read = any(map(_unranked, parts))  # a NaN ranked first: the order decides, read at once

    def check() -> None:
        assert _answers(ledger, objective) == _answers(restored, objective)
        assert [c.calls for _, c in counted] == [int(read)] * len(counted)

    check()
    for kind, arg in history:
        if kind == "record":
            read = read or (arg in names and arg != best)
            assert ledger.record(arg) == restored.record(arg)
        elif kind == "records":
            read = True
            assert ledger.records() == restored.records()
        else:
            trials = [_trial(name, *change) for name, change in arg if change is not None]
            removed = [name for name, change in arg if change is None]
            read = read or _needs_a_record(restored, _folds(kind, trials, removed), names)
            before = (ledger, restored, _answers(restored, objective))
            ledger = _call(ledger, kind, trials, removed)
            restored = _call(restored, kind, trials, removed)
            if before[0] is not ledger:  # updated: the ledger it was made from is unchanged
                assert _answers(before[0], objective) == before[2]
        check()
    assert [ledger.record(name) for name in ASKED] == [restored.record(name) for name in ASKED]
    assert ledger.records() == restored.records()


def test_joined_bases_merge_their_names_and_rank_their_bests() -> None:
    first = LedgerBase.of([TrialRecord("b", SUCCEEDED, 1.0), TrialRecord("d", FAILED, None)])
    second = LedgerBase.of([TrialRecord("a", SUCCEEDED, 1.0), TrialRecord("c", SUCCEEDED, 2.0)])
    joined = LedgerBase.joined([first, second])
    assert joined.names.succeeded_trials == ("a", "b", "c")
    assert joined.names.failed_trials == ("d",)
    assert joined.best == TrialRecord("a", SUCCEEDED, 1.0)  # the tie goes to the smaller name
    assert [r.name for r in joined.records()] == ["b", "d", "a", "c"]  # in the bases' order
    assert LedgerBase.joined([first]) is first
    assert LedgerBase.joined([]).best is None and not LedgerBase.joined([]).names.total


def test_a_nan_ranked_first_reads_the_records_at_once() -> None:
    """``restored`` ranks a NaN it meets first best (nothing compares less than it): only the
    records' order says so, and a base joined with one no longer knows its best."""
    unranked = LedgerBase.of([TrialRecord("n", SUCCEEDED, NAN), TrialRecord("z", SUCCEEDED, 0.0)])
    assert unranked.best is not None and unranked.best.name == "n"
    ranked, counted = _counted([TrialRecord("a", SUCCEEDED, 1.0)])
    ledger = TrialLedger.based(None, LedgerBase.joined([ranked, unranked]), None)
    assert counted.calls == 1
    assert ledger.optimal == TrialRecord("z", SUCCEEDED, 0.0)  # met after "a": the NaN never wins
    ledger = TrialLedger.based(None, LedgerBase.joined([unranked, ranked]), None)
    assert counted.calls == 2
    assert ledger.optimal is unranked.best


def test_a_base_whose_best_is_not_among_its_ranked_records_is_refused() -> None:
    names = TrialCounts(succeeded_trials=("a",))
    with pytest.raises(ValueError, match="'b'"):
        LedgerBase(names, TrialRecord("b", SUCCEEDED, 1.0), tuple)
    with pytest.raises(ValueError, match="'a'"):
        LedgerBase(names, TrialRecord("a", SUCCEEDED, None), tuple)
    with pytest.raises(ValueError, match="'a'"):
        LedgerBase(names, TrialRecord("a", FAILED, 1.0), tuple)


def test_a_restart_that_adds_trials_reads_no_record_of_its_base() -> None:
    """A restart's ledger: thousands of settled Trials in the base, new Trials created,
    running, finishing, one of them best for a while and then beaten; nothing reads a record
    of the base."""
    objective = ObjectiveSpec(type="minimize", objective_metric_name="loss", goal=0.05)
    settled = [TrialRecord(f"s{i:04}", SUCCEEDED, 0.2 + i / 10_000) for i in range(2_000)]
    base, counted = _counted(settled)
    ledger = TrialLedger.based(objective, base, BASIS)
    suggested = (*({"name": record.name} for record in settled), {"name": "new0"})
    assert ledger.unused(suggested, 1) == [{"name": "new0"}]
    ledger = ledger.updated([_trial("new0", None, None, True)])
    ledger = ledger.updated([_trial("new0", "Succeeded", "0.1", True)])
    assert ledger.optimal is not None and ledger.optimal.name == "new0"
    ledger = ledger.updated([_trial("new1", "Succeeded", "0.05", True)], ["gone"])
    assert ledger.goal_reached(objective) and ledger.record("s0000") == settled[0]
    assert ledger.counts.total == 2_002 and ledger.has("s1999") and not ledger.has("gone")
    assert counted.calls == 0
    ledger.fold("new1", None)  # the best goes: the next best may be a base record
    assert counted.calls == 1 and ledger.optimal is not None and ledger.optimal.name == "new0"


@given(bases(), st.lists(st.sampled_from(ASKED), max_size=8))
def test_a_base_answers_by_name_as_the_set_of_its_names(
    parts: list[list[TrialRecord]], asked: list[str]
) -> None:
    """``holds`` and ``without`` answer from the sorted names (binary searches, or a
    difference with each phase's names, whichever ``without`` takes) as the set of every
    name would."""
    base = LedgerBase.joined(LedgerBase.of(part) for part in parts)
    every = {record.name for part in parts for record in part}
    assert [base.holds(name) for name in asked] == [name in every for name in asked]
    for few in (0, 32, 10**9):  # by the differences, as it chooses, by the look-ups
        with patch.object(trial_ledger, "_FEW", few):
            assert base.without(asked) == set(asked) - every
