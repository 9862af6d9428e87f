"""The vocabulary of a per-state table: how a state is recognised, what it writes, what fires.

Theory of operation. A lifecycle's state is never stored: it is read back from the observed
conditions on every reconcile and written as conditions when it changes. Both directions are
declared per state, as frozen values, in one table per lifecycle (``StateTable``):

* ``recognised``: a test on the observed conditions (``IsTrue``, ``HasReason``, ...). The rows
  are in recognition order, most specific first, and ``derive`` returns the first row that
  matches, so the last row is the catch-all (``Always``);
* ``writes``: the conditions the state is marked with, in Katib's order; each writer may read
  the conditions being replaced (``IfTrue``, ``IfPresent``, ``Stopped``) or take a variable part
  the planner fills in (``Marked``: a message that depends on the world; ``Reported``: the
  state's own condition with what the planner observed of the run object appended);
* ``removes``: condition types dropped before writing (``Remove``, optionally only when a test
  on the old conditions holds).

``mark`` evaluates every writer and removal against the conditions *before* the write, then
removes and sets in order, so a row reads exactly like Katib's mark functions. The triggers a
planner may fire are one ordered list of ``Detector`` rows, each naming the boolean *signals*
(attributes of an object the planner builds from the snapshot) that justify it; the machine's
own table (``core.lifecycle.machine``) still says from which states each trigger is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Generic, Protocol, TypeVar

from katib_resume.core.conditions import (
    Conditions,
    ConditionSpec,
    Status,
    find,
    is_true,
    remove_condition,
    renew_condition,
    set_all,
)

StateT = TypeVar("StateT", bound=Enum)


class Recogniser(Protocol):
    def matches(self, conditions: Conditions, deleting: bool) -> bool: ...


@dataclass(frozen=True, slots=True)
class Always:
    """The catch-all: the state of an object no other row recognises."""

    def matches(self, conditions: Conditions, deleting: bool) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class MarkedForDeletion:
    """The object carries a ``deletionTimestamp``, whatever its conditions say."""

    def matches(self, conditions: Conditions, deleting: bool) -> bool:
        return deleting


@dataclass(frozen=True, slots=True)
class IsTrue:
    """A condition of ``type`` with status True (Katib's ``hasCondition``)."""

    type: str

    def matches(self, conditions: Conditions, deleting: bool) -> bool:
        return is_true(conditions, self.type)


@dataclass(frozen=True, slots=True)
class AnyTrue:
    """Some condition of one of ``types`` is True."""

    types: tuple[str, ...]

    def matches(self, conditions: Conditions, deleting: bool) -> bool:
        return any(is_true(conditions, type_) for type_ in self.types)


@dataclass(frozen=True, slots=True)
class HasReason:
    """A condition of ``type`` is present with ``reason`` (``other_than``: with another one)."""

    type: str
    reason: str
    other_than: bool = False

    def matches(self, conditions: Conditions, deleting: bool) -> bool:
        found = find(conditions, self.type)
        return found is not None and (found.reason == self.reason) is not self.other_than


class Writer(Protocol):
    def specs(self, conditions: Conditions, marks: object) -> tuple[ConditionSpec, ...]: ...


@dataclass(frozen=True, slots=True)
class Write:
    """Always this condition."""

    spec: ConditionSpec

    def specs(self, conditions: Conditions, marks: object) -> tuple[ConditionSpec, ...]:
        return (self.spec,)


@dataclass(frozen=True, slots=True)
class Marked:
    """The planner's variable condition ``name`` (an attribute of the marks it passes)."""

    name: str

    def specs(self, conditions: Conditions, marks: object) -> tuple[ConditionSpec, ...]:
        spec = getattr(marks, self.name)
        assert isinstance(spec, ConditionSpec), f"no {self.name!r} mark given"
        return (spec,)


@dataclass(frozen=True, slots=True)
class Report:
    """What a planner observed, for ``Reported`` writers: the run object's own reason and
    message (appended), or a reason or message of the planner's (replacing the state's)."""

    job_reason: str = ""
    job_message: str = ""
    reason: str | None = None
    message: str | None = None


NO_REPORT = Report()


@dataclass(frozen=True, slots=True)
class Reported:
    """``spec`` with the planner's marks, a ``Report``, in Katib's trial controller's words: the
    run object's reason and message appended (``TrialFailed. Job reason: BackoffLimitExceeded``),
    or either replaced whole where the planner says why itself (a refused run kind)."""

    spec: ConditionSpec

    def specs(self, conditions: Conditions, marks: object) -> tuple[ConditionSpec, ...]:
        assert isinstance(marks, Report), "a Reported condition is marked with a Report"
        return (self.written(marks),)

    def written(self, report: Report) -> ConditionSpec:
        spec, reason, message = self.spec, report.reason, report.message
        if reason is None:
            job = report.job_reason
            reason = f"{spec.reason}. Job reason: {job}" if job else spec.reason
        if message is None:
            job = report.job_message
            message = f"{spec.message}. Job message: {job}" if job else spec.message
        return ConditionSpec(spec.type, spec.status, reason, message)


@dataclass(frozen=True, slots=True)
class IfTrue:
    """``spec`` only while a condition of ``type`` is True."""

    type: str
    spec: ConditionSpec

    def specs(self, conditions: Conditions, marks: object) -> tuple[ConditionSpec, ...]:
        return (self.spec,) if is_true(conditions, self.type) else ()


@dataclass(frozen=True, slots=True)
class IfAnyTrue:
    """``spec`` only while a condition of one of ``types`` is True."""

    types: tuple[str, ...]
    spec: ConditionSpec

    def specs(self, conditions: Conditions, marks: object) -> tuple[ConditionSpec, ...]:
        if any(is_true(conditions, type_) for type_ in self.types):
            return (self.spec,)
        return ()


@dataclass(frozen=True, slots=True)
class IfPresent:
    """``spec`` only when a condition of ``type`` exists, whatever its status."""

    type: str
    spec: ConditionSpec

    def specs(self, conditions: Conditions, marks: object) -> tuple[ConditionSpec, ...]:
        return (self.spec,) if find(conditions, self.type) is not None else ()


@dataclass(frozen=True, slots=True)
class Renewed:
    """``writer``'s conditions with both times set now, in place, even when nothing else changes:
    for a condition that records an event which recurs with the same status, reason and message
    (a restart), where setting it as usual would keep the first occurrence's times."""

    writer: Writer

    def specs(self, conditions: Conditions, marks: object) -> tuple[ConditionSpec, ...]:
        return self.writer.specs(conditions, marks)


@dataclass(frozen=True, slots=True)
class Stopped:
    """A present condition of ``type`` set to False, its reason and message kept (Katib's way
    of stopping Running when the object fails or completes)."""

    type: str

    def specs(self, conditions: Conditions, marks: object) -> tuple[ConditionSpec, ...]:
        found = find(conditions, self.type)
        if found is None:
            return ()
        return (ConditionSpec(self.type, Status.FALSE, found.reason, found.message),)


@dataclass(frozen=True, slots=True)
class Remove:
    """Drop the condition of ``type`` (only when ``when`` matches the old conditions)."""

    type: str
    when: Recogniser = Always()


@dataclass(frozen=True, slots=True, kw_only=True)
class StateSpec(Generic[StateT]):
    """One row of a state table: the state, how it is recognised and how it is written."""

    state: StateT
    recognised: Recogniser
    writes: tuple[Writer, ...] = ()
    removes: tuple[Remove, ...] = ()
    warning: bool = False
    """Entering the state is reported with a Warning event (Normal otherwise)."""


SpecT = TypeVar("SpecT", bound="StateSpec[Any]")


class StateTable(Generic[StateT, SpecT]):
    """A lifecycle's rows, one per state, in recognition order."""

    def __init__(self, states: type[StateT], rows: Sequence[SpecT]) -> None:
        named = [row.state for row in rows]
        missing = set(states) - set(named)
        if missing or len(named) != len(set(named)):
            raise ValueError(f"{states.__name__}: one row per state ({sorted(map(str, missing))})")
        if not isinstance(rows[-1].recognised, Always):
            raise ValueError(f"{states.__name__}: the last row must recognise anything")
        self.rows = tuple(rows)
        # keyed by name: an Enum member's hash is computed in Python, a str's is cached
        self._by_name: dict[str, SpecT] = {row.state.name: row for row in rows}

    def __getitem__(self, state: StateT) -> SpecT:
        return self._by_name[state._name_]

    def derive(self, conditions: Conditions, deleting: bool = False) -> StateT:
        """The first state whose row recognises ``conditions``."""
        for row in self.rows:
            if row.recognised.matches(conditions, deleting):
                return row.state  # type: ignore[no-any-return]
        raise AssertionError("unreachable: the last row recognises anything")

    def mark(
        self, state: StateT, conditions: Conditions, marks: object, now: datetime
    ) -> Conditions:
        """``conditions`` rewritten as ``state``'s row says (idempotent)."""
        row = self._by_name[state._name_]
        wants = [
            (spec, isinstance(writer, Renewed))
            for writer in row.writes
            for spec in writer.specs(conditions, marks)
        ]
        drop = [r.type for r in row.removes if r.when.matches(conditions, False)]
        for type_ in drop:
            conditions = remove_condition(conditions, type_)
        for spec in (spec for spec, renewed in wants if renewed):
            conditions = renew_condition(conditions, spec, now)
        return set_all(conditions, [spec for spec, renewed in wants if not renewed], now)


@dataclass(frozen=True, slots=True)
class Detector:
    """A trigger and the signals that justify trying it: every name in ``when`` is true and
    every name in ``unless`` false on the planner's signals object."""

    trigger: str
    when: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()

    def detects(self, signals: object) -> bool:
        for name in self.when:
            if not getattr(signals, name):
                return False
        for name in self.unless:  # noqa: SIM110 (a loop: no generator on the hot path)
            if getattr(signals, name):
                return False
        return True
