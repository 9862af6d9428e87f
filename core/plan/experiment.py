"""The Experiment's half of a reconcile: its conditions, counters and its Suggestion's creation.

Katib's Experiment controller recomputes the status from the trials on every pass
(docs/katib-contract.md#trial-accounting) and detects a restart when a completed Experiment's budget
was raised (docs/katib-contract.md#experiment-controller). Here that is one pass through the
Experiment lifecycle: derive the state, pick the one trigger the trials and the Suggestion justify
(the lifecycle's detectors over ``_Signals``), fire it, and write the status only if something
actually changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from katib_resume.core.actions import (
    Action,
    Create,
    EventType,
    ObjectRef,
    RecordEvent,
    UpdateStatus,
)
from katib_resume.core.conditions import Conditions, ConditionSpec
from katib_resume.core.desired import desired_suggestion
from katib_resume.core.katib import (
    EXP_GOAL_REACHED,
    EXP_MAX_FAILED,
    EXP_MAX_TRIALS,
    SuggestionCondition,
)
from katib_resume.core.lifecycle.experiment import (
    COMPLETIONS,
    EXPERIMENT,
    STATES,
    ExperimentState,
    derive,
    mark,
)
from katib_resume.core.manifest import Manifest, format_time
from katib_resume.core.model import Experiment, Suggestion, Trial
from katib_resume.core.plan.provision import provision
from katib_resume.core.plan.result import Step, event_reason
from katib_resume.core.trial_ledger import TrialLedger, basis_of, ledger_of
from katib_resume.core.trial_phases import TRIAL_STATUS_KEYS
from katib_resume.core.trials import (
    COUNTED_FIELDS,
    TrialCounts,
    completion,
    counts_match,
    has_budget,
    status_counts,
    trials_to_create,
)
from katib_resume.core.validation import is_restartable

X = ExperimentState


@dataclass(frozen=True, slots=True)
class ExperimentDecision:
    step: Step
    actions: tuple[Action, ...]
    completed: bool
    restartable: bool


def decide_experiment(
    experiment: Experiment,
    suggestion: Suggestion | None,
    trials: Sequence[Trial],
    now: datetime,
    *,
    ledger: TrialLedger | None = None,
    exhausted: str = "",
) -> ExperimentDecision:
    """One reconcile of ``experiment`` (which is not being deleted). ``ledger``: the ledger of
    ``trials`` kept by the caller (``core.trial_ledger.advance``); without one, or with one
    folded for another Experiment, ``trials`` are folded here (counts and optimum, one pass).
    ``exhausted`` is the suggestion service's "no more", when it said so this reconcile."""
    if ledger is None or ledger.basis != basis_of(experiment):
        ledger = ledger_of(experiment, trials)
    counts = ledger.counts
    before = derive(experiment.status.conditions)
    signals = _Signals(experiment, counts, ledger, suggestion, exhausted)
    trigger, after = EXPERIMENT.step(before, signals, _Facts(experiment, counts))
    conditions = experiment.status.conditions
    if trigger is not None:
        conditions = mark(after, conditions, now, COMPLETIONS.get(trigger))
    actions: list[Action] = []
    status = _status(
        experiment, conditions=conditions, counts=counts, before=before, after=after, now=now
    )
    status = _with_optimal(experiment, status, ledger.current_optimal_trial())
    if status is not None:
        actions.append(UpdateStatus(_ref(experiment), status, experiment.metadata.resource_version))
    if trigger is not None:
        actions.append(_event(experiment, trigger, before, after))
    if STATES[after].active:
        if suggestion is None:
            requests = counts.total + trials_to_create(experiment.spec, counts)
            actions.append(Create(desired_suggestion(experiment, requests)))
        else:
            actions.extend(provision(experiment, suggestion, trials, counts, ledger))
    completed = STATES[after].completed
    restartable = completed and is_restartable(_with_conditions(experiment, conditions))
    step = Step(before, after, trigger)
    return ExperimentDecision(step, tuple(actions), completed, restartable)


def _with_conditions(experiment: Experiment, conditions: Conditions) -> Experiment:
    status = experiment.status.model_copy(update={"conditions": conditions})
    return experiment.model_copy(update={"status": status})


class _Signals:
    """What the Experiment's detectors read, each worked out only when a detector asks (the
    completion signals read the optimum)."""

    def __init__(
        self,
        experiment: Experiment,
        counts: TrialCounts,
        ledger: TrialLedger,
        suggestion: Suggestion | None,
        exhausted: str = "",
    ) -> None:
        self.experiment, self.counts, self.ledger = experiment, counts, ledger
        self.suggestion, self.exhausted = suggestion, exhausted
        self._outcome: tuple[ConditionSpec | None] | None = None
        self._has_trials: bool | None = None

    @property
    def is_suggestion_failed(self) -> bool:
        return self.suggestion is not None and self.suggestion.has(SuggestionCondition.FAILED)

    @property
    def is_suggestion_end_reached(self) -> bool:
        """The service has no point left (an exhausted grid, hyperband's last rung) and every
        Trial it gave has finished: Katib's fourth completion rule, which it never reaches. An
        assignment recorded without its Trial yet (the last cell of a grid, recorded by the
        reconcile before) is a Trial still to run."""
        if not self.exhausted or not self.has_trials or self.counts.active:
            return False
        recorded = 0 if self.suggestion is None else len(self.suggestion.status.suggestions)
        return recorded <= self.counts.total

    @property
    def has_trials(self) -> bool:
        if self._has_trials is None:
            self._has_trials = self.counts.total > 0
        return self._has_trials

    @property
    def outcome(self) -> ConditionSpec | None:
        """Katib's completion, once a trial exists (it recomputes nothing before)."""
        if self._outcome is None:
            spec = self.experiment.spec
            found = (
                completion(spec, self.counts, self.ledger.goal_reached(spec.objective))
                if self.has_trials
                else None
            )
            self._outcome = (found,)
        return self._outcome[0]

    @property
    def is_goal_reached(self) -> bool:
        return self.outcome is EXP_GOAL_REACHED  # ``completion`` returns the constants

    @property
    def is_max_trials_reached(self) -> bool:
        return self.outcome is EXP_MAX_TRIALS  # ``completion`` returns the constants

    @property
    def is_max_failed_trials_reached(self) -> bool:
        return self.outcome is EXP_MAX_FAILED  # ``completion`` returns the constants


class _Facts:
    """``ExperimentFacts``, worked out only when a guard asks (only a restart has guards)."""

    def __init__(self, experiment: Experiment, counts: TrialCounts) -> None:
        self.experiment, self.counts = experiment, counts

    @property
    def is_restartable(self) -> bool:
        return is_restartable(self.experiment)

    @property
    def has_budget(self) -> bool:
        return has_budget(self.experiment.spec, self.counts.total)


def _status(
    experiment: Experiment,
    *,
    conditions: Conditions,
    counts: TrialCounts,
    before: ExperimentState,
    after: ExperimentState,
    now: datetime,
) -> Manifest | None:
    """The new status, or ``None`` when it would equal the observed one (no no-op writes).

    Unchanged conditions (the observed tuple itself) are left out of the comparison, which
    they cannot change, and dumped only for a write: most reconciles change no condition, and
    the conditions are the costliest part of the status to serialise. With Trials counted, the
    observed trial fields are not dumped either: the counts replace them, and whether those
    equal them is ``counts_match``'s answer (a pass over every name, remembered), not a second
    pass of a serialiser and a comparison over the lists.
    """
    observed = experiment.status
    kept = conditions is observed.conditions and (
        bool(conditions) or "conditions" not in observed.model_fields_set
    )
    if kept and _unchanged(experiment, counts, before, after):
        return None
    left = {"conditions"} if kept else set()
    if counts.total:
        left |= COUNTED_FIELDS
    old = observed.to_dict(exclude=left)
    status = {**old, **status_counts(counts)} if counts.total else dict(old)
    if not kept:
        status["conditions"] = [c.to_dict() for c in conditions]
    generation = experiment.metadata.generation
    if generation is not None:
        status["observedGeneration"] = generation
    if observed.start_time is None and after is not X.Pending:
        status["startTime"] = format_time(now)
    if after is not before and after in (X.Succeeded, X.Failed):
        status["completionTime"] = format_time(now)
    if after is X.Running and before in (X.Succeeded, X.Failed):
        status.pop("completionTime", None)  # a restarted run has not completed (Katib bug 24)
    if not kept and not status["conditions"]:
        del status["conditions"]
    if counts.total:
        rest = {key: value for key, value in status.items() if key not in TRIAL_STATUS_KEYS}
        if rest == old and counts_match(observed, counts):
            return None
    elif status == old:
        return None
    if kept and conditions:  # in its place: first, as the full dump has it
        return {"conditions": [c.to_dict() for c in conditions], **status}
    return status


def _unchanged(
    experiment: Experiment, counts: TrialCounts, before: ExperimentState, after: ExperimentState
) -> bool:
    """Whether ``_status`` would find nothing to write, decided from the model without
    serialising the status (most reconciles write no Experiment status). Each test mirrors one
    step of ``_status``; ``False`` whenever in doubt, and ``_status`` then compares in full."""
    observed = experiment.status
    given = observed.model_fields_set
    generation = experiment.metadata.generation
    if generation is not None and (
        "observed_generation" not in given or observed.observed_generation != generation
    ):
        return False
    if observed.start_time is None and after is not X.Pending:
        return False
    if after is not before and after in (X.Succeeded, X.Failed):
        return False
    if after is X.Running and before in (X.Succeeded, X.Failed) and "completion_time" in given:
        return False
    return not counts.total or counts_match(observed, counts)


def _with_optimal(
    experiment: Experiment, status: Manifest | None, optimal: Manifest | None
) -> Manifest | None:
    """``status`` with ``currentOptimalTrial`` as computed (written only when it changed)."""
    stored = (experiment.status.model_extra or {}).get("currentOptimalTrial")
    if status is None:
        if stored == optimal:
            return None
        status = experiment.status.to_dict()
    if optimal is None:
        status.pop("currentOptimalTrial", None)
    else:
        status["currentOptimalTrial"] = optimal
    return status


def _ref(experiment: Experiment) -> ObjectRef:
    meta = experiment.metadata
    return ObjectRef(experiment.api_version, "Experiment", experiment.namespace, meta.name)


def _event(
    experiment: Experiment, trigger: str, before: ExperimentState, after: ExperimentState
) -> RecordEvent:
    kind: EventType = "Warning" if STATES[after].warning else "Normal"
    message = f"Experiment {before.value} -> {after.value}"
    return RecordEvent(_ref(experiment), kind, event_reason(trigger), message)
