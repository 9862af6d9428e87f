"""Trial accounting: which Trials an Experiment owns, how they count, and what the counts imply.

Katib recomputes everything from the listed Trials on every reconcile
(docs/katib-contract.md#trial-accounting), and so do we: ``own_trials`` selects, ``count_trials``
classifies, then three pure rules read the counts (``completion``, ``trials_to_create``,
``trials_to_delete``) and ``status_counts`` renders them in Katib's status field names.

Two Katib bugs are fixed here by construction:

* Bug 7: Katib selects Trials by label only, so a same-named Experiment in another namespace
  feeds in its Trials. ``own_trials`` also requires the namespace and, where both sides have a
  UID, the controller owner reference.
* Bug 12: Katib's completion rule counts ``MetricsUnavailable`` Trials as completed but its trial
  creation does not, so it can create more than ``maxTrialCount`` Trials. ``TrialCounts`` defines
  ``completed``, ``failed_total`` and ``active`` once, and every rule reads those properties.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from katib_resume.core import objective
from katib_resume.core.conditions import ConditionSpec, is_true
from katib_resume.core.katib import (
    DEFAULT_PARALLEL_TRIAL_COUNT,
    EXP_GOAL_REACHED,
    EXP_MAX_FAILED,
    EXP_MAX_TRIALS,
    LABEL_EXPERIMENT,
)
from katib_resume.core.model.experiment import Experiment, ExperimentSpec, ExperimentStatus
from katib_resume.core.model.trial import Trial
from katib_resume.core.trial_phases import (
    STATUS_KEYS,
    TRIAL_LIST_KEYS,
    TRIAL_STATUS_KEYS,
    TrialPhase,
)

# The objective half of trial accounting lives in ``core.objective``; it is offered here too so
# that a caller finds everything that reads the Trials of an Experiment in one place.
Optimum = objective.Optimum
best_trial = objective.best_trial
goal_reached = objective.goal_reached


_PHASES = tuple(TrialPhase)
"""The phases in Katib's first-match order (iterating an enum class is slow: once is enough)."""
_CONDITION_PHASES = tuple(phase for phase in _PHASES if phase is not TrialPhase.PENDING)


def classify(trial: Trial) -> TrialPhase:
    """The first phase whose condition is True; a Trial with none of them is Pending."""
    conditions = trial.status.conditions
    for phase in _CONDITION_PHASES:
        if is_true(conditions, phase):
            return phase
    return TrialPhase.PENDING


def is_own(experiment: Experiment, trial: Trial) -> bool:
    """Same namespace, the experiment label, and (when both UIDs are known) the controller owner."""
    meta = trial.metadata
    if (meta.namespace or "default") != experiment.namespace:
        return False
    if meta.labels.get(LABEL_EXPERIMENT) != experiment.metadata.name:
        return False
    owner, uid = meta.controller_uid(), experiment.metadata.uid
    return owner is None or uid is None or owner == uid


def own_trials(experiment: Experiment, trials: Iterable[Trial]) -> tuple[Trial, ...]:
    """The Trials that belong to ``experiment`` (fixes bug 7); input order kept."""
    return tuple(trial for trial in trials if is_own(experiment, trial))


@dataclass(frozen=True, slots=True)
class TrialCounts:
    """The Trials of an Experiment by phase: sorted names are stored, counts are derived from them.

    Storing only the names makes a count that disagrees with its list unrepresentable.
    """

    killed_trials: tuple[str, ...] = ()
    failed_trials: tuple[str, ...] = ()
    succeeded_trials: tuple[str, ...] = ()
    early_stopped_trials: tuple[str, ...] = ()
    running_trials: tuple[str, ...] = ()
    metrics_unavailable_trials: tuple[str, ...] = ()
    pending_trials: tuple[str, ...] = ()
    matched: object = field(default=None, init=False, repr=False, compare=False)
    """The last status found to hold exactly these counts (``counts_match``), by identity."""

    def names(self, phase: TrialPhase) -> tuple[str, ...]:
        names: tuple[str, ...] = getattr(self, FIELD_OF[phase])
        return names

    def count(self, phase: TrialPhase) -> int:
        return len(self.names(phase))

    @property
    def completed(self) -> int:
        """Trials that will not run again, whatever their outcome (the one definition, bug 12):
        the phases of ``COMPLETED_PHASES``, spelled out (a test holds the two together),
        because the planner asks for this count several times per reconcile."""
        return (
            len(self.succeeded_trials)
            + len(self.failed_trials)
            + len(self.killed_trials)
            + len(self.early_stopped_trials)
            + len(self.metrics_unavailable_trials)
        )

    @property
    def failed_total(self) -> int:
        """Failures for ``maxFailedTrialCount``: a Trial without metrics counts as failed."""
        return len(self.failed_trials) + len(self.metrics_unavailable_trials)

    @property
    def active(self) -> int:
        return len(self.pending_trials) + len(self.running_trials)

    @property
    def total(self) -> int:
        return self.completed + self.active


FIELD_OF = {
    TrialPhase.KILLED: "killed_trials",
    TrialPhase.FAILED: "failed_trials",
    TrialPhase.SUCCEEDED: "succeeded_trials",
    TrialPhase.EARLY_STOPPED: "early_stopped_trials",
    TrialPhase.RUNNING: "running_trials",
    TrialPhase.METRICS_UNAVAILABLE: "metrics_unavailable_trials",
    TrialPhase.PENDING: "pending_trials",
}
"""The ``TrialCounts`` field (and Katib's status list) of each phase."""


def count_trials(trials: Iterable[Trial]) -> TrialCounts:
    """Classify every Trial (docs/katib-contract.md#trial-phases) and keep the names of each phase,
    sorted."""
    by_phase: dict[TrialPhase, list[str]] = {phase: [] for phase in _PHASES}
    for trial in trials:
        by_phase[classify(trial)].append(trial.metadata.name)
    lists = {phase: tuple(sorted(names)) for phase, names in by_phase.items()}
    return TrialCounts(
        killed_trials=lists[TrialPhase.KILLED],
        failed_trials=lists[TrialPhase.FAILED],
        succeeded_trials=lists[TrialPhase.SUCCEEDED],
        early_stopped_trials=lists[TrialPhase.EARLY_STOPPED],
        running_trials=lists[TrialPhase.RUNNING],
        metrics_unavailable_trials=lists[TrialPhase.METRICS_UNAVAILABLE],
        pending_trials=lists[TrialPhase.PENDING],
    )


def completion(spec: ExperimentSpec, counts: TrialCounts, goal: bool) -> ConditionSpec | None:
    """Katib's ``UpdateExperimentStatusCondition``: the first matching rule, None if running.

    ``failed_total != 0`` is Katib's guard, so ``maxFailedTrialCount: 0`` never fails anything.
    """
    if goal:
        return EXP_GOAL_REACHED
    max_failed, failed = spec.max_failed_trial_count, counts.failed_total
    if max_failed is not None and failed != 0 and failed >= max_failed:
        return EXP_MAX_FAILED
    if spec.max_trial_count is not None and counts.completed >= spec.max_trial_count:
        return EXP_MAX_TRIALS
    return None


def parallelism(spec: ExperimentSpec) -> int:
    """``parallelTrialCount``, defaulted as Katib's mutating webhook would (3)."""
    if spec.parallel_trial_count is None:
        return DEFAULT_PARALLEL_TRIAL_COUNT
    return spec.parallel_trial_count


def trials_to_create(spec: ExperimentSpec, counts: TrialCounts) -> int:
    """Katib's ``ReconcileTrials`` arithmetic, with the one ``completed`` (bug 12).

    Since ``completed + active`` is every Trial, topping ``active`` up to at most
    ``maxTrialCount - completed`` never makes the Experiment own more than ``maxTrialCount``.
    """
    parallel = parallelism(spec)
    required = parallel
    if spec.max_trial_count is not None:
        required = min(spec.max_trial_count - counts.completed, parallel)
    return max(required - counts.active, 0)


def trials_to_delete(spec: ExperimentSpec, counts: TrialCounts) -> int:
    """Active Trials beyond the parallelism (after ``parallelTrialCount`` was lowered)."""
    return max(counts.active - parallelism(spec), 0)


def has_budget(spec: ExperimentSpec, made: int) -> bool:
    """Room for another Trial after ``made``: no ``maxTrialCount``, or one above it (the
    controller's restart guard; admission denies a restart whose budget has none)."""
    budget = spec.max_trial_count
    return budget is None or budget > made


def status_counts(counts: TrialCounts) -> dict[str, object]:
    """The Experiment status counters and name lists in Katib's JSON names.

    Counters are always present (a count that fell to 0 must be written as 0); an empty list is
    omitted, like Go's ``omitempty``. Merging this into an old status would therefore keep a list
    that has just become empty: use ``replace_status_counts`` for that.
    """
    fields: dict[str, object] = {"trials": counts.total}
    for phase, count_key, _ in STATUS_KEYS:
        fields[count_key] = counts.count(phase)
    for phase, _, list_key in STATUS_KEYS:
        if counts.names(phase):
            fields[list_key] = list(counts.names(phase))
    return fields


_COUNTER_FIELDS = {
    "trials": "trials",
    "trialsSucceeded": "trials_succeeded",
    "trialsFailed": "trials_failed",
    "trialsKilled": "trials_killed",
    "trialsPending": "trials_pending",
    "trialsRunning": "trials_running",
    "trialsEarlyStopped": "trials_early_stopped",
    "trialMetricsUnavailable": "trial_metrics_unavailable",
}
"""The counters' model fields by status key (the name lists are extra fields, by their key)."""
COUNTED_FIELDS = frozenset(_COUNTER_FIELDS.values()) | frozenset(TRIAL_LIST_KEYS)
"""The status fields ``status_counts`` owns as a dump's ``exclude`` names them: the counters by
their model fields, the name lists by their keys (extra fields)."""


def counts_match(status: ExperimentStatus, counts: TrialCounts) -> bool:
    """Whether ``status`` already holds exactly the trial fields ``replace_status_counts`` would
    give it, read from the model instead of its serialised form. ``False`` for anything not
    given exactly so.

    A steady reconcile asks this of an unchanged status every time, and the name lists make the
    answer a pass over every Trial's name. Both sides are immutable and asked again as the same
    objects (a model per ``resourceVersion``, the ledger's counts until a Trial changes), so a
    match is remembered on the counts (``matched``): asked again, it is an identity test."""
    if counts.matched is status:
        return True
    if not _matches(status, counts):
        return False
    object.__setattr__(counts, "matched", status)  # a cache: both are immutable
    return True


def _matches(status: ExperimentStatus, counts: TrialCounts) -> bool:
    given, extra = status.model_fields_set, status.model_extra or {}
    fields = status_counts(counts)
    for key, value in fields.items():
        field = _COUNTER_FIELDS.get(key)
        if field is None:
            if extra.get(key) != value:
                return False
        elif field not in given or getattr(status, field) != value:
            return False
    return not any(key in extra for key in TRIAL_STATUS_KEYS if key not in fields)


def replace_status_counts(status: Mapping[str, object], counts: TrialCounts) -> dict[str, object]:
    """``status`` with every trial field recomputed: stale lists go, other fields are kept."""
    kept = {key: value for key, value in status.items() if key not in TRIAL_STATUS_KEYS}
    return {**kept, **status_counts(counts)}
