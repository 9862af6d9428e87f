"""A declared lifecycle (``core/lifecycle/machine.py``): its ``transitions`` machine is the
table's, and the lifecycle, its rows and its compiled branches are frozen values."""

from __future__ import annotations

import dataclasses

import pytest
from transitions import Machine

from katib_resume.core.lifecycle import LIFECYCLES


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
