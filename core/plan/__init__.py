"""The planner: from one observed snapshot to the ordered actions of one reconcile.

``plan(observed, config, now)`` is a pure function. It runs the Experiment's half first (its
conditions, counters and, when missing, its Suggestion) and hands what it decided to the
Suggestion's half, so that a completion and the teardown it implies, or a restart and the
Suggestion's return to service, are planned from one consistent view. One reconcile moves each
lifecycle by at most one transition and writes each status at most once; a steady-state reconcile
plans no write at all. Katib splits this between two controllers that race on the Suggestion's
status (docs/katib-contract.md#two-controllers, bug 13); here a single writer owns each object.

When the decision depends on the suggestion service (its verdict on the settings, new
assignments), ``plan`` returns a ``Need`` instead of a ``Plan``; the shell answers it and plans
again (``core.plan.needs``). That loop is the whole protocol between an embedder and the core.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from katib_resume.core.actions import Requeue
from katib_resume.core.config import KatibConfig
from katib_resume.core.lifecycle.experiment import ExperimentState
from katib_resume.core.lifecycle.suggestion import SuggestionState
from katib_resume.core.observed import Observed
from katib_resume.core.plan.experiment import decide_experiment
from katib_resume.core.plan.finalizer import cleanup
from katib_resume.core.plan.needs import (
    ASSIGNMENT_RETRY_SECONDS,
    Need,
    NeedAssignments,
    NeedValidation,
    need,
    unanswered,
)
from katib_resume.core.plan.result import Plan, Step
from katib_resume.core.plan.suggestion import Context, decide_suggestion, state_of

__all__ = [
    "ASSIGNMENT_RETRY_SECONDS",
    "Need",
    "NeedAssignments",
    "NeedValidation",
    "Plan",
    "Step",
    "plan",
]


def plan(observed: Observed, config: KatibConfig, now: datetime) -> Plan | Need:
    """The actions that move the cluster one step towards what ``observed`` calls for, or what
    the suggestion service must answer first (``core.plan.needs``)."""
    suggestion = observed.suggestion
    state = None if suggestion is None else state_of(suggestion)
    wanted = need(observed, state)
    if wanted is not None:
        return wanted
    decided = _decide(observed, config, now, state)
    if unanswered(observed, state):
        retry = Requeue(ASSIGNMENT_RETRY_SECONDS, "the suggestion service gave no assignments")
        decided = replace(decided, actions=(*decided.actions, retry))
    return decided


def _decide(
    observed: Observed, config: KatibConfig, now: datetime, state: SuggestionState | None
) -> Plan:
    experiment, suggestion = observed.experiment, observed.suggestion
    if experiment is None or experiment.metadata.is_deleting:
        if suggestion is None:
            return Plan()
        actions = cleanup(observed, suggestion) if suggestion.metadata.is_deleting else ()
        return Plan(actions)
    decided = decide_experiment(
        experiment,
        suggestion,
        observed.trials,
        now,
        ledger=observed.ledger,
        exhausted=_exhausted(observed),
    )
    if suggestion is None or state is None:
        return Plan(decided.actions, decided.step)
    context = Context(
        completed=decided.completed,
        failed=decided.step.after is ExperimentState.Failed,
        restartable=decided.restartable,
    )
    step, actions = decide_suggestion(observed, suggestion, context, config, now, before=state)
    return Plan((*decided.actions, *actions), decided.step, step)


def _exhausted(observed: Observed) -> str:
    """The service's "no more", once its answer brought no assignment: the last ones of an
    exhausted search (a grid's last cell asked for with two more) are Trials still to run,
    which no count of active Trials holds yet (the next ask, which brings none, ends it)."""
    return "" if observed.assignments else observed.exhausted
