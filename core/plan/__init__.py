"""The planner: from one observed snapshot to the ordered actions of one reconcile.

``plan(observed, config, now)`` is a pure function. It runs the Experiment's half first (its
conditions, counters and, when missing, its Suggestion) and hands what it decided to the
Suggestion's half, so that a completion and the teardown it implies, or a restart and the
Suggestion's return to service, are planned from one consistent view. One reconcile moves each
lifecycle by at most one transition and writes each status at most once; a steady-state reconcile
plans no write at all. Katib splits this between two controllers that race on the Suggestion's
status (BEHAVIOR.md §9, bug 13); here a single writer owns each object.
"""

from __future__ import annotations

from datetime import datetime

from katib_resume.core.config import KatibConfig
from katib_resume.core.lifecycle.experiment import ExperimentState
from katib_resume.core.observed import Observed
from katib_resume.core.plan.experiment import decide_experiment
from katib_resume.core.plan.finalizer import cleanup
from katib_resume.core.plan.result import Plan, Step
from katib_resume.core.plan.suggestion import Context, decide_suggestion
from katib_resume.core.plan.suggestion import wants_assignments as _wants_assignments
from katib_resume.core.plan.suggestion import wants_validation as _wants_validation

__all__ = ["Plan", "Step", "plan", "wants_assignments", "wants_validation"]


def plan(observed: Observed, config: KatibConfig, now: datetime) -> Plan:
    """The actions that move the cluster one step towards what ``observed`` calls for."""
    experiment, suggestion = observed.experiment, observed.suggestion
    if experiment is None or experiment.metadata.is_deleting:
        if suggestion is None:
            return Plan()
        actions = cleanup(observed, suggestion) if suggestion.metadata.is_deleting else ()
        return Plan(actions)
    decided = decide_experiment(experiment, suggestion, observed.trials, now)
    if suggestion is None:
        return Plan(decided.actions, decided.step)
    context = Context(
        experiment_exists=True,
        completed=decided.completed,
        failed=decided.step.after is ExperimentState.Failed,
        restartable=decided.restartable,
    )
    step, actions = decide_suggestion(observed, suggestion, context, config, now)
    return Plan((*decided.actions, *actions), decided.step, step)


def wants_validation(observed: Observed) -> bool:
    """Whether the shell should call the suggestion service's validation before ``plan``.

    True exactly when the plan may mark the Suggestion Running: its Deployment has just become
    available. Without a validation result the settings count as valid (Katib's Unimplemented).
    """
    suggestion = observed.suggestion
    return suggestion is not None and _wants_validation(observed, suggestion)


def wants_assignments(observed: Observed) -> int:
    """How many new assignments the shell should fetch from the suggestion service before
    ``plan`` (Katib's SyncAssignments: ``spec.requests`` minus those already recorded)."""
    suggestion = observed.suggestion
    return 0 if suggestion is None else _wants_assignments(observed, suggestion)
