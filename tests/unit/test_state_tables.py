"""The per-state tables: one row per state, a catch-all last, detectors only of known triggers.

The behaviour of the rows (what each state writes and how it is read back) is proved by the
round-trip properties of ``tests/property/test_lifecycle.py``; these are the shape rules that
make a malformed table fail at import instead of misreading a cluster.
"""

from __future__ import annotations

import pytest

from katib_resume.core.lifecycle.experiment import STATES as EXPERIMENT_STATES
from katib_resume.core.lifecycle.experiment import ExperimentState
from katib_resume.core.lifecycle.machine import Lifecycle, Transition
from katib_resume.core.lifecycle.states import Always, Detector, IsTrue, StateSpec, StateTable
from katib_resume.core.lifecycle.suggestion import STATES as SUGGESTION_STATES
from katib_resume.core.lifecycle.suggestion import Asks, Holds, SuggestionState

X = ExperimentState


def test_a_table_without_a_row_for_some_state_is_refused() -> None:
    rows = [StateSpec(state=X.Pending, recognised=Always())]
    with pytest.raises(ValueError, match="one row per state"):
        StateTable(ExperimentState, rows)


def test_a_table_whose_last_row_is_not_a_catch_all_is_refused() -> None:
    rows = [StateSpec(state=state, recognised=IsTrue(state.value)) for state in ExperimentState]
    with pytest.raises(ValueError, match="last row"):
        StateTable(ExperimentState, rows)


def test_a_detector_of_a_trigger_the_table_lacks_is_refused() -> None:
    table = (Transition("created", X.Pending, X.Created),)
    with pytest.raises(ValueError, match="not in the table"):
        Lifecycle("E", ExperimentState, X.Pending, table, (Detector("created_twice"),))


def test_every_row_is_recognised_as_its_own_state_when_nothing_else_matches() -> None:
    for table in (SUGGESTION_STATES, EXPERIMENT_STATES):
        assert table.derive(()) is table.rows[-1].state


def test_the_suggestion_asks_the_service_only_while_its_service_is_ensured() -> None:
    for row in SUGGESTION_STATES.rows:
        if row.asks is not Asks.NOTHING:
            assert row.holds is Holds.ENSURED, row.state
    asking = {row.state for row in SUGGESTION_STATES.rows if row.asks is not Asks.NOTHING}
    assert asking == {SuggestionState.Deploying, SuggestionState.Running}
