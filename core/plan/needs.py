"""What a plan still needs from the suggestion service before it can decide, h11-style.

``core.plan.plan`` is pure and the suggestion service is I/O, so the planner cannot call it.
Instead ``plan`` returns either a ``Plan`` or a ``Need``: the shell answers the need (calls the
service, or says it could not) into the snapshot with ``need.answer`` and calls ``plan`` again,
until a ``Plan`` comes back::

    result = plan(observed, config, now)
    while not isinstance(result, Plan):
        observed = result.answer(observed, ask_the_service(result))
        result = plan(observed, config, now)

Each need is asked at most once per snapshot (an answered field is never ``None`` again), so the
loop ends after at most one question of each kind. What a state needs is its row's ``asks`` in
``core.lifecycle.suggestion.STATES``:

* ``NeedValidation``: the Suggestion is Deploying and its Deployment has just become available:
  the service's verdict on the settings decides Running or Failed. An embedder without a
  validator answers ``VALID`` (Katib's ``Unimplemented``).
* ``NeedAssignments``: the Suggestion is Running and ``spec.requests`` is above the assignments
  recorded (Katib's SyncAssignments). ``None`` answers "the service could not give any": the
  plan then asks to be requeued after ``ASSIGNMENT_RETRY_SECONDS``, as nothing else in the
  cluster would change to wake the Experiment.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from katib_resume.core.lifecycle.suggestion import STATES, Asks, SuggestionState
from katib_resume.core.model import Suggestion
from katib_resume.core.observed import Assignments, Observed, Validation
from katib_resume.core.plan.children import available

ASSIGNMENT_RETRY_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class NeedValidation:
    """Ask ``ValidateAlgorithmSettings`` about ``suggestion``."""

    suggestion: Suggestion

    def answer(self, observed: Observed, verdict: Validation) -> Observed:
        return replace(observed, validation=verdict)


@dataclass(frozen=True, slots=True)
class NeedAssignments:
    """Ask ``GetSuggestions`` for ``count`` assignments beyond those ``suggestion`` records."""

    suggestion: Suggestion
    count: int

    def answer(self, observed: Observed, fetched: Assignments | None) -> Observed:
        """``fetched`` is ``None`` when the service could not answer."""
        given = fetched or Assignments()
        return replace(
            observed,
            assignments=given.items,
            algorithm_settings=given.algorithm_settings,
            exhausted=given.exhausted,
        )


Need = NeedValidation | NeedAssignments


def need(observed: Observed, state: SuggestionState | None) -> Need | None:
    """What ``observed`` still lacks for a plan (``None``: nothing); ``state`` is its
    Suggestion's (``None``: there is none)."""
    suggestion = observed.suggestion
    if suggestion is None or state is None:
        return None
    asks = STATES[state].asks
    if asks is Asks.VALIDATION and observed.validation is None:
        return NeedValidation(suggestion) if available(observed.deployment) else None
    if asks is Asks.ASSIGNMENTS and observed.assignments is None:
        count = wanted_assignments(observed, suggestion, state)
        return NeedAssignments(suggestion, count) if count else None
    return None


def wanted_assignments(observed: Observed, suggestion: Suggestion, state: SuggestionState) -> int:
    """Katib's SyncAssignments: ``spec.requests`` minus those recorded, for a running service of
    an Experiment that is not completed."""
    experiment = observed.experiment
    if experiment is None or experiment.is_completed():
        return 0
    if STATES[state].asks is not Asks.ASSIGNMENTS:
        return 0
    return max(0, suggestion.spec.requests - len(suggestion.status.suggestions))


def unanswered(observed: Observed, state: SuggestionState | None) -> bool:
    """Assignments were asked for and none came: the plan must ask to be looked at again."""
    suggestion = observed.suggestion
    if suggestion is None or state is None or observed.assignments != ():
        return False
    return wanted_assignments(observed, suggestion, state) > 0
