"""The trial ledger folded one change at a time equals Katib's from-scratch recomputation."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.model.trial import Trial
from katib_resume.core.objective import best_trial, goal_reached
from katib_resume.core.trial_ledger import TrialLedger
from katib_resume.core.trials import count_trials

PHASES = ["Succeeded", "Failed", "Running", "EarlyStopped", "MetricsUnavailable", "Killed", None]
VALUES = ["0.1", "0.5", "0.5", "0.9", "unavailable", "nan", "", None]

objectives = st.builds(
    ObjectiveSpec,
    type=st.sampled_from(["minimize", "maximize", "", None]),
    objective_metric_name=st.sampled_from(["loss", None]),
    metric_strategies=st.sampled_from(
        [(), ({"name": "loss", "value": "latest"},), ({"name": "loss", "value": "max"},)]
    ),
)


def _trial(name: str, phase: str | None, value: str | None) -> Trial:
    status: dict[str, Any] = {
        "conditions": [{"type": phase, "status": "True"}] if phase else [],
    }
    if value is not None:
        metric = {"name": "loss", "min": value, "max": value, "latest": value}
        status["observation"] = {"metrics": [metric]}
    spec = {"parameterAssignments": [{"name": "lr", "value": name}]}
    return Trial.model_validate({"metadata": {"name": name}, "spec": spec, "status": status})


changes = st.lists(
    st.tuples(
        st.sampled_from([f"t{i}" for i in range(6)]),
        st.one_of(st.none(), st.tuples(st.sampled_from(PHASES), st.sampled_from(VALUES))),
    ),
    max_size=30,
)


@given(objectives, changes)
def test_folding_changes_equals_recomputing_from_scratch(
    objective: ObjectiveSpec, history: list[tuple[str, tuple[str | None, str | None] | None]]
) -> None:
    ledger = TrialLedger(objective)
    live: dict[str, Trial] = {}
    for name, change in history:
        if change is None:
            live.pop(name, None)
            ledger.fold(name, None)
        else:
            live[name] = _trial(name, *change)
            ledger.fold(name, live[name])
        trials = list(live.values())
        assert ledger.counts == count_trials(trials)
        best = best_trial(objective, trials)
        assert (ledger.optimal.name if ledger.optimal else None) == (best.trial if best else None)
        scratch = TrialLedger.of(objective, trials)
        assert scratch.current_optimal_trial() == ledger.current_optimal_trial()


batches = st.lists(changes, max_size=6)


@given(objectives, st.sampled_from([None, 0.5]), batches)
def test_the_updated_ledger_equals_the_full_fold_and_leaves_the_old_one_alone(
    objective: ObjectiveSpec,
    goal: float | None,
    history: list[list[tuple[str, tuple[str | None, str | None] | None]]],
) -> None:
    """``updated`` fed only each batch's changes equals a fold of every live Trial, after every
    batch (counts, the optimum and the goal test), and the ledger it started from is unchanged."""
    objective = objective.model_copy(update={"goal": goal})
    ledger = TrialLedger(objective)
    live: dict[str, Trial] = {}
    for batch in history:
        changed: dict[str, Trial] = {}
        removed: set[str] = set()
        for name, change in batch:
            if change is None:
                live.pop(name, None)
                changed.pop(name, None)
                removed.add(name)
            else:
                live[name] = changed[name] = _trial(name, *change)
                removed.discard(name)
        before = (ledger.counts, ledger.current_optimal_trial())
        new = ledger.updated(changed.values(), removed)
        assert (ledger.counts, ledger.current_optimal_trial()) == before
        ledger = new
        scratch = TrialLedger.of(objective, live.values())
        assert ledger.counts == scratch.counts == count_trials(live.values())
        assert ledger.current_optimal_trial() == scratch.current_optimal_trial()
        assert ledger.goal_reached(objective) == goal_reached(objective, live.values())
