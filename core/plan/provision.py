"""Trials for an active Experiment: Katib's ReconcileTrials and ReconcileSuggestions
(docs/katib-contract.md#trial-accounting).

While the Experiment runs, keep ``parallelTrialCount`` Trials active without ever exceeding
``maxTrialCount`` (one definition of "completed", bug 12): ask the Suggestion for more
assignments by raising ``spec.requests``, turn assignments that have no Trial yet into Trials,
and, when the parallelism was lowered, delete the newest active Trials (their assignments stay on
the Suggestion and are given to new Trials later, so no assignment is lost). Katib busy-waits up
to a minute for deleted Trials to disappear (bug 22); a plan simply moves on.
"""

from __future__ import annotations

from collections.abc import Sequence

from katib_resume.core.actions import Action, Create, Delete, ObjectRef, UpdateSpec
from katib_resume.core.desired import desired_trial
from katib_resume.core.katib import SuggestionCondition
from katib_resume.core.model import Experiment, Suggestion, Trial
from katib_resume.core.trial_ledger import TrialLedger
from katib_resume.core.trial_phases import TrialPhase
from katib_resume.core.trials import (
    TrialCounts,
    classify,
    own_trials,
    trials_to_create,
    trials_to_delete,
)

_ACTIVE = (TrialPhase.PENDING, TrialPhase.RUNNING)


def provision(
    experiment: Experiment,
    suggestion: Suggestion,
    trials: Sequence[Trial],
    counts: TrialCounts,
    ledger: TrialLedger | None = None,
) -> tuple[Action, ...]:
    """The Trial and Suggestion writes that keep an active Experiment's trials flowing.

    ``trials`` may hold other Experiments' Trials (only the own ones count); ``ledger``, the
    trial ledger of the own ones, finds the assignments without a Trial from where it last
    looked (``TrialLedger.unused``) instead of testing every one (by default: from ``trials``)."""
    if suggestion.metadata.is_deleting or suggestion.has(SuggestionCondition.FAILED):
        return ()
    deletes = _surplus(experiment, trials, counts)
    add = trials_to_create(experiment.spec, counts)
    if add <= 0:
        return deletes
    actions: list[Action] = list(deletes)
    requests = counts.total + add
    if suggestion.spec.requests != requests:
        spec = suggestion.spec.to_dict() | {"requests": requests}
        ref = ObjectRef(suggestion.api_version, "Suggestion", suggestion.namespace, suggestion.name)
        actions.append(UpdateSpec(ref, spec, suggestion.metadata.resource_version))
    assignments = suggestion.status.suggestions
    if ledger is None:
        taken = {trial.metadata.name for trial in own_trials(experiment, trials)}
        unused = [a for a in assignments if str(a.get("name")) not in taken][:add]
    else:
        unused = ledger.unused(assignments, add)
    actions.extend(Create(desired_trial(experiment, a)) for a in unused)
    return tuple(actions)


def _surplus(
    experiment: Experiment, trials: Sequence[Trial], counts: TrialCounts
) -> tuple[Action, ...]:
    """Delete the newest active Trials beyond ``parallelTrialCount``."""
    surplus = trials_to_delete(experiment.spec, counts)
    if surplus <= 0:
        return ()
    mine = own_trials(experiment, trials)  # only here (rare: the parallelism was lowered)
    active = [t for t in mine if classify(t) in _ACTIVE and not t.metadata.is_deleting]
    active.sort(
        key=lambda t: (
            t.metadata.creation_timestamp is None,
            t.metadata.creation_timestamp,
            t.metadata.name,
        ),
        reverse=True,
    )
    return tuple(
        Delete(
            ObjectRef(t.api_version, "Trial", t.metadata.namespace, t.metadata.name),
            t.metadata.uid or "",
        )
        for t in active[:surplus]
    )
