"""The state-table vocabulary (``core/lifecycle/states.py``) word by word: the conditional
writers, the detectors' ``unless``, the refusals of a malformed table in full, and the rows of
every lifecycle being frozen values (a table is declared once, at import, and never changes)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from katib_resume.core.conditions import Condition, Conditions, ConditionSpec, Status
from katib_resume.core.lifecycle.experiment import STATES as EXPERIMENT_STATES
from katib_resume.core.lifecycle.experiment import ExperimentState
from katib_resume.core.lifecycle.states import (
    NO_REPORT,
    Always,
    Detector,
    IfAnyTrue,
    IfPresent,
    Marked,
    Reported,
    StateSpec,
    StateTable,
    Stopped,
)
from katib_resume.core.lifecycle.suggestion import DETECTORS as SUGGESTION_DETECTORS
from katib_resume.core.lifecycle.suggestion import STATES as SUGGESTION_STATES
from katib_resume.core.lifecycle.suggestion import Marks, SuggestionFacts, SuggestionSignals
from katib_resume.core.lifecycle.trial import DETECTORS as TRIAL_DETECTORS
from katib_resume.core.lifecycle.trial import STATES as TRIAL_STATES

X = ExperimentState
NOW = datetime(2020, 1, 1, tzinfo=UTC)
SPEC = ConditionSpec("Restarting", Status.TRUE, "R", "restarting")


def _conditions(*pairs: tuple[str, str]) -> Conditions:
    return tuple(
        Condition(type=type_, status=Status(status), reason="why", message="said")
        for type_, status in pairs
    )


def test_if_any_true_writes_while_one_of_its_types_is_true() -> None:
    writer = IfAnyTrue(("Succeeded", "Failed"), SPEC)
    assert writer.specs(_conditions(("Succeeded", "False"), ("Failed", "True")), None) == (SPEC,)
    assert writer.specs(_conditions(("Succeeded", "False"), ("Running", "True")), None) == ()


def test_if_present_writes_whatever_the_status_and_stopped_keeps_the_words() -> None:
    assert IfPresent("Running", SPEC).specs(_conditions(("Running", "False")), None) == (SPEC,)
    assert IfPresent("Running", SPEC).specs(_conditions(("Created", "True")), None) == ()
    stopped = Stopped("Running").specs(_conditions(("Running", "True")), None)
    assert stopped == (ConditionSpec("Running", Status.FALSE, "why", "said"),)
    assert Stopped("Running").specs((), None) == ()


def test_a_detector_needs_every_when_and_no_unless() -> None:
    @dataclasses.dataclass
    class Signals:
        a: bool = False
        b: bool = False

    detector = Detector("go", when=("a",), unless=("b",))
    assert detector.detects(Signals(a=True))
    assert not detector.detects(Signals(a=True, b=True))
    assert not detector.detects(Signals())
    assert Detector("always").detects(Signals())


def test_a_writer_given_the_wrong_marks_says_which() -> None:
    with pytest.raises(AssertionError) as marked:
        Marked("waiting").specs((), SimpleNamespace(waiting="not a spec"))
    assert str(marked.value) == "no 'waiting' mark given"
    with pytest.raises(AssertionError) as reported:
        Reported(SPEC).specs((), object())
    assert str(reported.value) == "a Reported condition is marked with a Report"


def test_a_malformed_table_is_refused_in_full_words() -> None:
    with pytest.raises(ValueError) as missing:
        StateTable(ExperimentState, [StateSpec(state=X.Pending, recognised=Always())])
    absent = sorted(str(state) for state in ExperimentState if state is not X.Pending)
    assert str(missing.value) == f"ExperimentState: one row per state ({absent})"
    rows = [StateSpec(state=state, recognised=Always()) for state in ExperimentState]
    with pytest.raises(ValueError) as twice:
        StateTable(ExperimentState, [*rows, rows[0]])
    assert str(twice.value) == "ExperimentState: one row per state ([])"
    last = [*rows[1:], StateSpec(state=X.Pending, recognised=Stopped("x"))]  # type: ignore[arg-type]
    with pytest.raises(ValueError) as catch_all:
        StateTable(ExperimentState, last)
    assert str(catch_all.value) == "ExperimentState: the last row must recognise anything"


def test_only_failures_and_a_blocked_service_enter_with_a_warning() -> None:
    warned = [
        [row.state.name for row in table.rows if row.warning]
        for table in (EXPERIMENT_STATES, SUGGESTION_STATES, TRIAL_STATES)
    ]
    assert warned == [["Failed"], ["Failed", "Blocked"], []]


def _values(value: Any) -> list[Any]:
    """Every dataclass value reachable from ``value`` (through fields and tuples)."""
    if isinstance(value, tuple):
        return [found for item in value for found in _values(item)]
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return []
    inner = [getattr(value, f.name) for f in dataclasses.fields(value)]
    return [value, *(found for item in inner for found in _values(item))]


def test_every_row_of_every_table_is_a_frozen_value() -> None:
    rows = (EXPERIMENT_STATES.rows, SUGGESTION_STATES.rows, TRIAL_STATES.rows)
    told = (SuggestionFacts(), SuggestionSignals(), Marks(SPEC, SPEC, SPEC, SPEC), NO_REPORT)
    found = _values((*rows, SUGGESTION_DETECTORS, TRIAL_DETECTORS, *told))
    kinds = {type(value).__name__ for value in found}
    assert {"Always", "MarkedForDeletion", "IsTrue", "AnyTrue", "HasReason", "Write"} <= kinds
    assert {"Marked", "Reported", "IfTrue", "IfAnyTrue", "IfPresent", "Renewed"} <= kinds
    assert {"Stopped", "Remove", "Detector", "Report"} <= kinds
    for value in found:
        hash(value)  # a mutable dataclass is unhashable
        for field in dataclasses.fields(value)[:1]:
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(value, field.name, None)
