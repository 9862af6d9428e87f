"""A declared lifecycle (``core/lifecycle/machine.py``): its ``transitions`` machine is the
table's, and the lifecycle, its rows and its compiled branches are frozen values."""

from __future__ import annotations

import dataclasses

import pytest
from transitions import Machine

from katib_resume.core.lifecycle import LIFECYCLES, IllegalTransition, Lifecycle, Transition
from katib_resume.core.lifecycle.states import Detector
from katib_resume.core.lifecycle.trial import TRIAL, TrialState


@pytest.mark.parametrize("name", sorted(LIFECYCLES))
def test_the_machine_has_the_tables_states_and_triggers(name: str) -> None:
    lifecycle = LIFECYCLES[name]
    assert isinstance(lifecycle.machine, Machine)
    assert set(lifecycle.machine.events) == set(lifecycle.triggers)
    assert set(lifecycle.machine.states) == {state.name for state in lifecycle.states}


@pytest.mark.parametrize("name", sorted(LIFECYCLES))
def test_a_lifecycle_and_its_rows_are_frozen(name: str) -> None:
    lifecycle = LIFECYCLES[name]
    with pytest.raises(dataclasses.FrozenInstanceError):
        lifecycle.name = "changed"  # type: ignore[misc]
    branches = [branch for row in lifecycle.compiled.values() for branch in row]
    for value in (*lifecycle.table, *branches):
        hash(value)  # a mutable dataclass is unhashable
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.dest = lifecycle.initial


def test_a_trigger_not_allowed_or_not_in_the_table_is_refused_in_words() -> None:
    trial = TRIAL
    with pytest.raises(IllegalTransition) as illegal:
        trial.fire(TrialState.Running, "created", None)
    assert str(illegal.value) == "Trial: 'created' is not allowed from Running"
    table = (Transition("created", TrialState.Pending, TrialState.Created),)
    with pytest.raises(ValueError) as unknown:
        Lifecycle("T", TrialState, TrialState.Pending, table, (Detector("started"),))
    assert str(unknown.value) == "T: detectors of triggers not in the table: {'started'}"


def test_the_lifecycles_are_listed_by_the_names_the_diagram_command_takes() -> None:
    names = {key: lifecycle.name for key, lifecycle in LIFECYCLES.items()}
    assert names == {"experiment": "Experiment", "suggestion": "Suggestion", "trial": "Trial"}
