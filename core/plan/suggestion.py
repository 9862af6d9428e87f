"""The Suggestion's half of a reconcile: its conditions and the suggestion service's objects.

One pass through the Suggestion lifecycle: derive the state from the conditions, let the
lifecycle's detectors try the triggers the world justifies (``SuggestionSignals``), fire the
first one that moves, then emit the level actions the resulting state's row of
``core.lifecycle.suggestion.STATES`` asks for (``Holds``): ensure the children while the service
should exist, tear the Deployment and Service down once it should not, and clean the PV up while
our finalizer holds the Suggestion. katib-config is read only while the service's objects are
planned: teardown and cleanup never need it. Nothing here names a state: the rows say it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from katib_resume.core.actions import (
    Action,
    EventType,
    RecordEvent,
    Requeue,
    UpdateStatus,
)
from katib_resume.core.conditions import ConditionSpec, Status
from katib_resume.core.config import ConfigError, KatibConfig
from katib_resume.core.history import History
from katib_resume.core.katib import SuggestionCondition as S
from katib_resume.core.katib import SuggestionReason
from katib_resume.core.lifecycle.suggestion import (
    STATES,
    SUGGESTION,
    Asks,
    Holds,
    Marks,
    SuggestionFacts,
    SuggestionSignals,
    SuggestionState,
    derive,
    mark,
)
from katib_resume.core.manifest import Manifest, format_time
from katib_resume.core.model import Suggestion
from katib_resume.core.names import service_name
from katib_resume.core.observed import Observed, Outcome
from katib_resume.core.plan import marks
from katib_resume.core.plan.children import (
    available,
    conflicts,
    ensure,
    release_claim,
    teardown,
)
from katib_resume.core.plan.finalizer import cleanup, ensure_finalizer, suggestion_ref
from katib_resume.core.plan.result import Step, event_reason
from katib_resume.core.policy import PolicyTraits, traits
from katib_resume.core.volumes import VolumePlan, volume_plan

RETRY_SECONDS = 5.0
_HISTORY = {"suggestions"}
"""Left out of the status dump: every assignment ever issued, already JSON, passed on as it is
(a dump would copy the whole history on every status write)."""
_PLANNED = (Holds.PLANNED, Holds.ENSURED)


@dataclass(frozen=True, slots=True)
class Context:
    """What the Experiment's half of the reconcile decided, as the Suggestion needs it."""

    completed: bool = False
    failed: bool = False
    restartable: bool = False


def state_of(suggestion: Suggestion) -> SuggestionState:
    """The Suggestion's observed state, derived once per plan and handed to each half."""
    return derive(suggestion)


def decide_suggestion(
    observed: Observed,
    suggestion: Suggestion,
    context: Context,
    config: KatibConfig,
    now: datetime,
    *,
    before: SuggestionState,
) -> tuple[Step, tuple[Action, ...]]:
    """One reconcile of ``suggestion``, observed in state ``before`` (``state_of``)."""
    if STATES[before].holds is Holds.CLEANED_UP:
        return Step(before, before), cleanup(observed, suggestion)
    policy = traits(suggestion.spec.policy)
    volume, config_error = _volume(suggestion, config, policy, before)
    found = conflicts(observed, suggestion, volume)
    signals = SuggestionSignals(
        experiment_completed=context.completed,
        conflicted=bool(found),
        available=available(observed.deployment),
    )
    trigger, after = SUGGESTION.step(before, signals, _facts(observed, context, policy))
    if config_error is not None and STATES[after].holds is Holds.ENSURED:
        return Step(before, before), _config_error(suggestion, config_error)
    try:
        level = _level(observed, suggestion, state=after, config=config, volume=volume, now=now)
    except ConfigError as error:
        return Step(before, before), _config_error(suggestion, error)
    wanted = _marks(observed, context=context, policy=policy, volume=volume, found=found, now=now)
    head = ensure_finalizer(suggestion, policy)
    status = _status(
        suggestion,
        before=before,
        after=after,
        wanted=wanted,
        now=now,
        assignments=observed.assignments or (),
        settings=observed.algorithm_settings,
    )
    events = _events(suggestion, before, after, trigger, observed, lost=_lost(observed, policy))
    return Step(before, after, trigger), (*head, *level[0], *status, *level[1], *events)


def _volume(
    suggestion: Suggestion, config: KatibConfig, policy: PolicyTraits, state: SuggestionState
) -> tuple[VolumePlan | None, ConfigError | None]:
    if not policy.has_volume or STATES[state].holds not in _PLANNED:
        return None, None
    try:
        return volume_plan(suggestion, config.suggestion(suggestion.algorithm)), None
    except ConfigError as error:
        return None, error


def _facts(observed: Observed, context: Context, policy: PolicyTraits) -> SuggestionFacts:
    outcome = observed.validation.outcome if observed.validation else Outcome.VALID
    kept = policy.keeps_service and context.restartable
    return SuggestionFacts(
        is_settings_valid=outcome is Outcome.VALID,
        is_settings_invalid=outcome is Outcome.INVALID,
        is_service_released=context.completed and not kept,
        is_volume_kept=policy.has_volume,
    )


def _level(
    observed: Observed,
    suggestion: Suggestion,
    *,
    state: SuggestionState,
    config: KatibConfig,
    volume: VolumePlan | None,
    now: datetime,
) -> tuple[tuple[Action, ...], tuple[Action, ...]]:
    """(actions before the status write, actions after it) that the state holds the world to."""
    row = STATES[state]
    if row.holds is Holds.RELEASED:
        return (), teardown(observed, suggestion)
    if row.holds is not Holds.ENSURED:
        return (), ()
    ensured = ensure(observed, suggestion, config, volume)
    waits: list[Action] = list(release_claim(observed, suggestion, volume))
    if ensured.waiting_for:
        waits.append(Requeue(RETRY_SECONDS, "waiting for " + ", ".join(ensured.waiting_for)))
    if volume is not None and observed.pvc is not None and not observed.pvc.is_bound():
        left = (marks.BIND_GRACE - marks.unbound_for(observed, now)).total_seconds()
        if left > 0:
            waits.append(Requeue(left, "waiting for the PersistentVolumeClaim to bind"))
    if row.asks is Asks.VALIDATION and _validation_unavailable(observed):
        waits.append(Requeue(RETRY_SECONDS, "suggestion service did not answer validation"))
    return ensured.creates, tuple(waits)


def _validation_unavailable(observed: Observed) -> bool:
    validation = observed.validation
    return (
        available(observed.deployment)
        and validation is not None
        and validation.outcome is Outcome.UNAVAILABLE
    )


def _marks(
    observed: Observed,
    *,
    context: Context,
    policy: PolicyTraits,
    volume: VolumePlan | None,
    found: list[str],
    now: datetime,
) -> Marks:
    """The variable conditions the rows' ``Marked`` writers take, from what the world says."""
    return Marks(
        waiting=marks.waiting_mark(observed, volume, now),
        blocked=_blocked(found),
        succeeded=marks.succeeded_mark(context, policy.has_volume, _lost(observed, policy)),
        failed=marks.failed_mark(observed),
        running=marks.running_mark(observed),
    )


def _lost(observed: Observed, policy: PolicyTraits) -> str | None:
    """How a volume policy's claim is lost (missing or terminating), if it is."""
    suggestion = observed.suggestion
    if not policy.has_volume or suggestion is None:
        return None
    return marks.volume_lost(observed, service_name(suggestion.name, suggestion.algorithm))


def _blocked(found: list[str]) -> ConditionSpec:
    return ConditionSpec(
        S.DEPLOYMENT_READY, Status.FALSE, SuggestionReason.OWNERSHIP_CONFLICT, "; ".join(found)
    )


def _status(
    suggestion: Suggestion,
    *,
    before: SuggestionState,
    after: SuggestionState,
    wanted: Marks,
    now: datetime,
    assignments: tuple[Manifest, ...],
    settings: tuple[Manifest, ...] = (),
) -> tuple[Action, ...]:
    """The status write, only when the conditions, startTime or assignments really change.

    New assignments are recorded only by a running service (Katib's SyncAssignments), with the
    algorithm settings that came with them merged into ``algorithmSettings``.
    """
    old = suggestion.status.conditions
    row = STATES[after]
    relabel = after is not before or row.remarked
    conditions = mark(after, old, wanted, now) if relabel else old
    start = suggestion.status.start_time is None and row.starts
    fresh = assignments if row.asks is Asks.ASSIGNMENTS else ()
    if conditions is old and not start and not fresh:
        return ()
    status = suggestion.status.to_dict(exclude=_HISTORY)
    status["conditions"] = [c.to_dict() for c in conditions]
    if start:
        status["startTime"] = format_time(now)
    held = suggestion.status.suggestions
    if "suggestions" in suggestion.status.model_fields_set:
        status["suggestions"] = held if isinstance(held, History) else list(held)
    if fresh:
        status["suggestions"] = _extended(held, fresh)
        status["suggestionCount"] = len(status["suggestions"])
        if settings:
            status["algorithmSettings"] = merge_settings(
                status.get("algorithmSettings", ()), settings
            )
    meta = suggestion.metadata
    return (UpdateStatus(suggestion_ref(suggestion), status, meta.resource_version),)


def _extended(held: Sequence[Manifest], fresh: Sequence[Manifest]) -> Sequence[Manifest]:
    """The history with ``fresh`` appended: a ``History`` (a store's, not decoded) extends
    itself without reading what it holds; a tuple is copied into a new list."""
    if isinstance(held, History):
        return held.extended(fresh)
    return [*held, *fresh]


def _events(
    suggestion: Suggestion,
    before: SuggestionState,
    after: SuggestionState,
    trigger: str | None,
    observed: Observed,
    *,
    lost: str | None = None,
) -> tuple[Action, ...]:
    """The transition's event; a restart on a lost volume is a Warning that says so."""
    events: list[Action] = []
    if trigger is not None and after is not before:
        kind: EventType = "Warning" if STATES[after].warning else "Normal"
        message = f"Suggestion {before.value} -> {after.value}"
        returns = STATES[before].holds is Holds.RELEASED and STATES[after].holds in _PLANNED
        if lost is not None and returns:
            kind, message = "Warning", f"{message}: {lost}; {marks.RESTART_ON_NEW_VOLUME}"
        events.append(RecordEvent(suggestion_ref(suggestion), kind, event_reason(trigger), message))
    if STATES[after].asks is Asks.VALIDATION and _validation_unavailable(observed):
        detail = observed.validation.message if observed.validation else ""
        events.append(
            RecordEvent(suggestion_ref(suggestion), "Warning", "ValidationUnavailable", detail)
        )
    return tuple(events)


def _config_error(suggestion: Suggestion, error: ConfigError) -> tuple[Action, ...]:
    """Katib's Warning event ``ReconcileError`` and a retry; the status is left as it is."""
    return (
        RecordEvent(suggestion_ref(suggestion), "Warning", "ReconcileError", str(error)),
        Requeue(RETRY_SECONDS, str(error)),
    )


def merge_settings(held: Iterable[Manifest], returned: Iterable[Manifest]) -> list[Manifest]:
    """Katib's merge of returned algorithm settings: a setting of the same name takes the new
    value in place, a new name is appended, the order is otherwise kept."""
    merged = {str(item["name"]): dict(item) for item in held}
    for item in returned:
        name = str(item.get("name", ""))
        if name:
            merged[name] = {"name": name, "value": str(item.get("value", ""))}
    return list(merged.values())
