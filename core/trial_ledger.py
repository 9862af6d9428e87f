"""The Experiment's view of its Trials as a fold: counters, name lists and the optimal Trial.

Katib recomputes ``status.trials*``, the per-phase name lists and ``currentOptimalTrial`` from
every listed Trial on every reconcile. ``TrialLedger`` computes the same from *changes*: ``fold``
takes one Trial as it now is (or its removal) and updates what it keeps, so whoever holds a
ledger per Experiment (a store fed by a watch) pays per changed Trial, not per Trial owned.
``TrialLedger.of`` folds a whole list, which is what a scan-based caller does; the property tests
hold the two ways together and against ``core.trials.count_trials`` and
``core.objective.best_trial``.

The optimal Trial is Katib's ``currentOptimalTrial``: the best objective value by the objective's
type and metric strategy (``core.objective``), its parameter assignments and its observation.
Keeping the best is O(1) per fold, except when the best Trial itself gets worse or goes, which
rescans the values kept (not the Trials). Ties go to the smallest name, as in ``best_trial``.

``updated(changed, removed)`` is the pure form the reconcile shell uses: a new ledger with the
changes folded in, the receiver untouched (a copy of its tables, at C speed, then one fold per
change). ``ledger_of`` and ``advance`` add the Experiment: its own Trials only (``is_own``), and
a ledger's ``basis`` (the Experiment's identity and objective) says which Experiment it was
folded for, so that a ledger kept across an Experiment's deletion and re-creation, or across an
objective edit, is never reused (``advance`` answers ``None``: fold in full again).

A restart starts a ledger from records kept by the last command (``restored``), and for the
Trials sealed in blocks (``core.blocks``) from less: a ``LedgerBase`` per block (each phase's
names and the best record, the records themselves decoded only if asked for), joined into one.
``based`` is the ledger ``restored`` would make of the base's records, made from that aggregate
alone (at 5,000 records about 10 microseconds, against 2 milliseconds for ``restored``). It
reads the records, once, and is a plain ledger from then on, only when an operation needs one:
all of them (``records``), one other than the best (``record``, a fold of a base Trial), or
every value again (a rescan of the best). Sealed Trials are settled ones, which hardly ever
change, so a restart's reconciles (counts, the optimum, the goal, ``unused``, folds of the
other Trials) read none. A restart's ledger may also be told which of the Suggestion's stored
assignments already have a Trial (``vouched``), so that its first ``unused`` tests only the
later ones.
"""

from __future__ import annotations

import bisect
import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, compress, count, filterfalse
from math import isnan
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

from immutables import Map

from katib_resume.core.history import Stored, names_of, starts_with, stored
from katib_resume.core.model.experiment import Experiment, ObjectiveSpec
from katib_resume.core.model.trial import Trial
from katib_resume.core.objective import (
    ObjectiveType,
    direction_of,
    observed_value,
    reaches_goal,
    strategy_for,
)
from katib_resume.core.trial_phases import TrialPhase
from katib_resume.core.trials import FIELD_OF, TrialCounts, classify, is_own, own_trials

Basis = tuple[str, str, str | None, ObjectiveSpec | None]
"""What a ledger was folded for: the Experiment's namespace, name, UID and objective."""


class TrialRecord(NamedTuple):
    """What the ledger keeps of one Trial: a value (a tuple, so that a restart's thousands of
    records are made at C speed, ``restored``)."""

    name: str
    phase: TrialPhase
    key: float | None
    """The objective value, negated for ``maximize`` so that smaller is always better."""
    assignments: tuple[dict[str, Any], ...] = ()
    metrics: tuple[Any, ...] = ()


_PHASE, _KEY = attrgetter("phase"), attrgetter("key")
"""An assignment's name, as ``unused`` reads it (passed over the history at C speed)."""
_FIRST = itemgetter(0)
_RANK = attrgetter("key", "name")
_PHASES = tuple(TrialPhase)
_FEW = 32
"""``LedgerBase.without`` looks names up one by one while they are fewer than this fraction
of the base's: a look-up is a binary search of each phase's names (about 30 times a set's
probe), a difference a probe per name held."""


@dataclass(frozen=True, slots=True, eq=False)
class LedgerBase:
    """What a ledger starts from instead of its records (``TrialLedger.based``): the aggregate
    that ``TrialLedger.restored`` would make of them, and the records, read only if asked for.

    A sealer keeps the aggregate with the records it seals (``of``); a restart hands it over
    with a callable that decodes the records, so a ledger that never needs one never decodes
    any. Compared by identity (the callable has no value)."""

    names: TrialCounts
    """Each phase's names, sorted: one per record (a name given twice counts once)."""
    best: TrialRecord | None
    """The record ``restored`` ranks best (``None``: no record has a key). A best whose key is
    NaN says the ranking depends on the records' order (``restored`` remembers such records one
    by one), which no aggregate knows: ``based`` reads the records at once."""
    records: Callable[[], Iterable[TrialRecord]]
    """Every record, decoded when called (a name given twice: its last record counts, as in
    ``restored``)."""

    def __post_init__(self) -> None:
        best = self.best
        if best is not None and (
            best.key is None or not _in_sorted(self.names.names(best.phase), best.name)
        ):
            raise ValueError(f"the best record {best.name!r} is not a ranked one of the base")

    @classmethod
    def of(cls, records: Iterable[TrialRecord]) -> LedgerBase:
        """The base of ``records`` as a sealer keeps it (the records kept as given)."""
        kept = tuple(records)
        ledger = TrialLedger.restored(None, kept, None)
        return cls(ledger.counts, ledger.optimal, lambda: kept)

    @classmethod
    def joined(cls, bases: Iterable[LedgerBase]) -> LedgerBase:
        """One base of several whose names never overlap (a Trial is sealed in one block):
        ``restored`` of their records chained in order. Each phase's names merged (a sort of
        sorted runs, at C speed), the best the least by (key, name); a NaN best (its rank
        unknown) is the joined base's, so that ``based`` reads them all."""
        parts = tuple(bases)
        if len(parts) == 1:
            return parts[0]
        names = TrialCounts(
            **{
                FIELD_OF[phase]: tuple(
                    sorted(chain.from_iterable(b.names.names(phase) for b in parts))
                )
                for phase in _PHASES
            }
        )
        bests = [base.best for base in parts if base.best is not None]
        unranked = [best for best in bests if best.key is not None and isnan(best.key)]
        best = unranked[0] if unranked else min(bests, key=_RANK, default=None)
        return cls(names, best, lambda: chain.from_iterable(base.records() for base in parts))

    def holds(self, name: str) -> bool:
        """Whether one of the records is named ``name``: a binary search of each phase's
        sorted names (a restart asks of a few names, and a set of every sealed one would cost
        what the history holds)."""
        return any(_in_sorted(self.names.names(phase), name) for phase in _PHASES)

    def without(self, names: Iterable[str]) -> set[str]:
        """Those of ``names`` that no record is named, at the cost of the fewer: a few names
        (a reconcile's newest assignments) looked up by ``holds``, else a C-level pass over
        ``names`` and one over each phase's names (a set difference with a tuple walks the
        whole tuple, however few the names: every reconcile would pay for the history), no
        set of every name made either way."""
        wanted = set(names)
        if len(wanted) * _FEW < self.names.total:
            return {name for name in wanted if not self.holds(name)}
        return wanted.difference(*map(self.names.names, _PHASES))


def _in_sorted(names: Sequence[str], name: str) -> bool:
    index = bisect.bisect_left(names, name)
    return index < len(names) and names[index] == name


class _Ranker:
    """Reads one Trial's objective value the way ``core.objective.best_trial`` does."""

    def __init__(self, objective: ObjectiveSpec | None) -> None:
        self.metric, self.strategy, self.sign = "", "", 0.0
        direction = direction_of(objective)
        if objective is not None and direction is not None:
            self.metric = objective.objective_metric_name or ""
            self.strategy = strategy_for(objective, direction)
            self.sign = 1.0 if direction is ObjectiveType.MINIMIZE else -1.0

    def key(self, trial: Trial) -> float | None:
        if not self.sign:
            return None
        value = observed_value(trial, self.metric, self.strategy)
        return None if value is None else self.sign * value


class TrialLedger:
    """Counters, name lists and the optimal Trial of one Experiment, updated one Trial at a time."""

    def __init__(self, objective: ObjectiveSpec | None, basis: Basis | None = None) -> None:
        self.basis = basis
        self._ranker = _Ranker(objective)
        self._records: Map[str, TrialRecord] = Map()
        """By name, in a persistent map: ``updated`` shares it, and a fold makes a new one
        sharing all but a few of its nodes, so a copy costs what changed, not what is held."""
        self._names: dict[TrialPhase, list[str]] = {phase: [] for phase in TrialPhase}
        self._owned: set[TrialPhase] = set(TrialPhase)
        """The phases whose name list is this ledger's own (the others are shared with the
        ledger it was ``updated`` from, and copied when first changed)."""
        self._tuples: dict[TrialPhase, tuple[str, ...]] = {}
        """The name lists as ``counts`` hands them out, per phase, until the phase changes."""
        self._best: tuple[float, str] | None = None
        self._counts: TrialCounts | None = None
        self._removals = 0
        """How many Trials were folded away: a name the ledger had may since be free again."""
        self._used: tuple[Sequence[dict[str, Any]], int, int] | None = None
        self._vouched: Stored | None = None
        """A stored chain's first items that a caller vouched all have a Trial (``vouched``),
        trusted until the first removal."""
        """``unused``'s memo: assignments it read, how many of them from the start all have a
        Trial, and ``_removals`` then."""
        self._base: LedgerBase | None = None
        """The base ``based`` started from, until its records are read (``_read``). Meanwhile
        ``_records`` holds the records of the other Trials only, and ``_best`` may be the
        base's best."""

    @classmethod
    def of(
        cls, objective: ObjectiveSpec | None, trials: Iterable[Trial], basis: Basis | None = None
    ) -> TrialLedger:
        ledger = cls(objective, basis)
        for trial in trials:
            ledger.fold(trial.metadata.name, trial)
        return ledger

    @classmethod
    def restored(
        cls, objective: ObjectiveSpec | None, records: Iterable[TrialRecord], basis: Basis | None
    ) -> TrialLedger:
        """A ledger of records kept from an earlier fold for the same ``objective`` (each as
        ``fold`` would record its Trial): what a restart reads instead of the Trials.

        The ledger ``_remember`` would make of them one by one, made in bulk (a restart
        restores thousands): the map from one ``dict``, each phase's names sorted once, the
        best by one ``min``. A Trial named twice keeps its last record; records with a NaN key
        (which ``min`` would rank otherwise) are remembered one by one."""
        ledger = cls(objective, basis)
        held = {record.name: record for record in records}
        names, kept = list(held), list(held.values())
        keys = map(_KEY, kept)
        ranked = [(key, name) for key, name in zip(keys, names, strict=True) if key is not None]
        if any(map(isnan, map(_FIRST, ranked))):
            for record in kept:
                ledger._remember(record)
            return ledger
        ledger._records = Map(held)
        phases = list(map(_PHASE, kept))
        for phase in set(phases):
            ledger._names[phase] = sorted(compress(names, map(phase.__eq__, phases)))
        ledger._best = min(ranked) if ranked else None
        return ledger

    @classmethod
    def based(
        cls, objective: ObjectiveSpec | None, base: LedgerBase, basis: Basis | None
    ) -> TrialLedger:
        """The ledger ``restored(objective, base.records(), basis)`` would be, made from the
        base's aggregate: each phase's names copied (at C speed) and its best, the records not
        read. Every answer is that ledger's, after any operations; the records are read (once)
        by the first operation that needs one (see the module docstring)."""
        best = base.best
        if best is not None and best.key is not None and isnan(best.key):
            return cls.restored(objective, base.records(), basis)
        ledger = cls(objective, basis)
        counts = ledger._counts = base.names
        ledger._tuples = {phase: counts.names(phase) for phase in _PHASES}
        ledger._names = {phase: list(names) for phase, names in ledger._tuples.items()}
        ledger._best = None if best is None or best.key is None else (best.key, best.name)
        ledger._base = base
        return ledger

    def vouched(self, prefix: Stored) -> TrialLedger:
        """This ledger, told that every item of ``prefix`` (a stored chain's first items) is
        named for one of its Trials: ``unused`` of a history that starts with those items (a
        restart's) tests from there instead of proving them again, until a Trial is removed.
        The caller answers for it (the embedded runtime proves it when a command closes and
        keeps it only while no Trial is written: ``app.embedded.vouched``)."""
        told = self._copy()
        told._vouched = prefix
        return told

    def records(self) -> tuple[TrialRecord, ...]:
        """What the ledger keeps, one record per Trial (for ``restored``)."""
        self._read()
        return tuple(self._records.values())

    def record(self, name: str) -> TrialRecord | None:
        """The record of the Trial ``name``, if the ledger keeps one."""
        record, base = self._records.get(name), self._base
        if record is not None or base is None:
            return record
        if base.best is not None and base.best.name == name:
            return base.best
        if not base.holds(name):
            return None
        self._read()
        return self._records.get(name)

    def updated(self, changed: Iterable[Trial], removed: Iterable[str] = ()) -> TrialLedger:
        """A new ledger: this one with ``changed`` (Trials as they now are) and the removal of
        the Trials named ``removed`` folded in; this one is left as it was."""
        changed, removed = tuple(changed), tuple(removed)
        if not changed and not removed:
            return self
        new = self._copy()
        for name in removed:
            new.fold(name, None)
        for trial in changed:
            new.fold(trial.metadata.name, trial)
        return new

    def _copy(self) -> TrialLedger:
        """A ledger equal to this one that changes apart from it: the tables shared until
        either changes them (the name lists copied on a change, ``_own``)."""
        new = copy.copy(self)
        new._names, new._owned, new._tuples = dict(self._names), set(), dict(self._tuples)
        return new

    def has(self, name: str) -> bool:
        """Whether the Trial ``name`` is one of the ledger's."""
        base = self._base
        return name in self._records or (base is not None and base.holds(name))

    def goal_reached(self, objective: ObjectiveSpec | None) -> bool:
        """``core.objective.goal_reached`` of the Trials folded, from the optimum kept."""
        best = self._best
        return best is not None and reaches_goal(objective, self._ranker.sign * best[0])

    def fold(self, name: str, trial: Trial | None) -> None:
        """Take ``trial`` as the current state of the Trial ``name`` (None: it is gone)."""
        old = self._records.get(name)
        if old is None and self._base is not None and self._base.holds(name):
            self._read()  # a base Trial changes: its record leaves the base's aggregate
            old = self._records.get(name)
        if old is not None:
            self._records = self._records.delete(name)
            self._forget(old)
        if trial is not None:
            self._remember(self._record(name, trial))
        if old is not None and self._best == (old.key, name) and not self._holds_best(name):
            self._best = self._rescan()
        if old is not None and trial is None:
            self._removals += 1
        self._counts = None

    def unused(self, assignments: Sequence[dict[str, Any]], wanted: int) -> list[dict[str, Any]]:
        """The first ``wanted`` of ``assignments`` whose name no Trial of the ledger has, in
        order: ``[a for a in assignments if not self.has(str(a.get("name")))][:wanted]``.

        The Suggestion's assignments only grow and each soon has its Trial, so testing every
        one on every reconcile would cost what the history holds. The ledger remembers how many
        assignments from the start all have a Trial (a Trial only stops being the ledger's by
        a removal, which forgets that), and tests from there when the list still starts with
        the one it read (compared at C speed; the parsed versions of a Suggestion share their
        items, so mostly by identity). A ``History`` (a store's, not decoded) answers both
        without decoding: whether it extends the one read by identity, its names from its
        stored texts (``History.names``); only the assignments returned are decoded."""
        first = self.assigned(assignments)
        found: list[dict[str, Any]] = []
        records, base = self._records, self._base
        for assignment in assignments[first:]:  # the few still without a Trial
            if len(found) >= wanted:
                break
            name = str(assignment.get("name"))
            if name not in records and (base is None or not base.holds(name)):
                found.append(assignment)
        return found

    def assigned(self, assignments: Sequence[dict[str, Any]]) -> int:
        """How many of ``assignments``, from the first, each have a Trial (remembered, so
        that the next call tests from there: see ``unused``)."""
        first = self._first_unused(assignments)
        self._used = (assignments, first, self._removals)
        return first

    def _first_unused(self, assignments: Sequence[dict[str, Any]]) -> int:
        """The index of the first assignment without a Trial (``len``: there is none)."""
        start, memo = 0, self._used
        if memo is not None and memo[2] == self._removals:
            seen, start = memo[0], memo[1]
            if seen is not assignments and not starts_with(assignments, seen, start):
                start = 0
        vouched, head = self._vouched, stored(assignments)
        if not start and vouched and head and head.chain == vouched.chain and not self._removals:
            start = min(vouched.held, head.held)
        names, records = names_of(assignments, start), self._records
        left = set(names) if self._base is None else self._base.without(names)
        missing = set(filterfalse(records.__contains__, left))  # the few without a Trial
        if not missing:
            return len(assignments)
        return next(compress(count(start), map(missing.__contains__, names)))

    def _read(self) -> None:
        """Take the base's records in, once: from here on a plain ledger. The names and the
        best already count them (the base's aggregate); the other Trials' records, none of
        them the base's, are laid over them."""
        base = self._base
        if base is not None:
            held = {record.name: record for record in base.records()}
            self._records, self._base = Map(held).update(self._records), None

    def _record(self, name: str, trial: Trial) -> TrialRecord:
        extra = trial.status.model_extra or {}
        observation = extra.get("observation")
        metrics = observation.get("metrics") if isinstance(observation, dict) else None
        return TrialRecord(
            name,
            classify(trial),
            self._ranker.key(trial),
            trial.spec.parameter_assignments,
            tuple(metrics) if isinstance(metrics, list) else (),
        )

    def _remember(self, record: TrialRecord) -> None:
        self._records = self._records.set(record.name, record)
        bisect.insort(self._own(record.phase), record.name)
        if record.key is not None and (
            self._best is None or (record.key, record.name) < self._best
        ):
            self._best = (record.key, record.name)

    def _forget(self, record: TrialRecord) -> None:
        names = self._own(record.phase)
        del names[bisect.bisect_left(names, record.name)]

    def _own(self, phase: TrialPhase) -> list[str]:
        """The name list of ``phase``, this ledger's own, about to change."""
        if phase not in self._owned:
            self._names[phase] = list(self._names[phase])
            self._owned.add(phase)
        self._tuples.pop(phase, None)
        return self._names[phase]

    def _holds_best(self, name: str) -> bool:
        record = self._records.get(name)
        return record is not None and self._best == (record.key, name)

    def _rescan(self) -> tuple[float, str] | None:
        self._read()
        ranked = [(r.key, r.name) for r in self._records.values() if r.key is not None]
        return min(ranked) if ranked else None

    @property
    def counts(self) -> TrialCounts:
        if self._counts is None:
            tuples = self._tuples
            for phase, names in self._names.items():
                if phase not in tuples:
                    tuples[phase] = tuple(names)
            self._counts = TrialCounts(**{FIELD_OF[p]: tuples[p] for p in self._names})
        return self._counts

    @property
    def optimal(self) -> TrialRecord | None:
        best, base = self._best, self._base
        if best is None:
            return None
        if base is not None and base.best is not None and base.best.name == best[1]:
            return base.best  # unread: the one base record known
        return self._records[best[1]]

    def current_optimal_trial(self) -> dict[str, Any] | None:
        """Katib's ``status.currentOptimalTrial`` (None while no Trial has an objective value)."""
        best = self.optimal
        if best is None:
            return None
        return {
            "bestTrialName": best.name,
            "parameterAssignments": [dict(a) for a in best.assignments],
            "observation": {"metrics": list(best.metrics)},
        }


def basis_of(experiment: Experiment) -> Basis:
    meta = experiment.metadata
    return (experiment.namespace, meta.name, meta.uid, experiment.spec.objective)


def ledger_of(experiment: Experiment, trials: Iterable[Trial]) -> TrialLedger:
    """The ledger of ``experiment``'s own Trials among ``trials`` (a full fold)."""
    mine = own_trials(experiment, trials)
    return TrialLedger.of(experiment.spec.objective, mine, basis_of(experiment))


def advance(
    ledger: TrialLedger, experiment: Experiment, changed: Iterable[Trial], removed: Iterable[str]
) -> TrialLedger | None:
    """``ledger`` with the changes of ``experiment``'s namespace folded in (a changed Trial
    that is no longer the Experiment's own counts as removed); ``None`` when ``ledger`` was not
    folded for this Experiment (fold in full: ``ledger_of``)."""
    if ledger.basis != basis_of(experiment):
        return None
    changed = tuple(changed)
    mine = [trial for trial in changed if is_own(experiment, trial)]
    strays = [trial.metadata.name for trial in changed if not is_own(experiment, trial)]
    return ledger.updated(mine, (*removed, *strays))
