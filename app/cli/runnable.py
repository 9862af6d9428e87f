"""Before ``run -f`` creates anything: would the suggestion service accept the settings?

Katib admits an Experiment whose algorithm settings its suggestion service then rejects: the
Suggestion fails with "Validation failed: ValidateAlgorithmSettings Error: <reason>" once its
Deployment is up, and so does the Experiment. The embedded runtime's service is in process, so
``run -f`` asks it first, on the Experiment as Katib's defaulting webhook would leave it, and
refuses with the message Katib's Suggestion would carry (exit 1), before the state directory
is touched.
"""

from __future__ import annotations

from katib_resume.adapters.local.suggestion import SettingsError, medianstop
from katib_resume.adapters.local.suggestion import validate as validate_algorithm
from katib_resume.core.defaults import default_experiment
from katib_resume.core.denied import Denied
from katib_resume.core.model import Experiment
from katib_resume.core.observed import Outcome
from katib_resume.core.validation import Decision

FAILED = "Validation failed: {method} Error: {reason}"


def refuse_unrunnable(experiment: Experiment) -> None:
    """``Denied`` with Katib's Suggestion failure message if the service would reject it."""
    try:
        defaulted = default_experiment(experiment)
    except (ValueError, TypeError):
        return  # admission will say what is wrong with the Experiment itself
    early = defaulted.spec.early_stopping
    if early is not None:
        try:
            medianstop.read(early)
        except SettingsError as error:
            method = "ValidateEarlyStoppingSettings"
            raise _denied(FAILED.format(method=method, reason=error)) from None
    without = defaulted.model_copy(
        update={"spec": defaulted.spec.model_copy(update={"early_stopping": None})}
    )
    verdict = validate_algorithm(without)
    if verdict.outcome is Outcome.INVALID:
        reason = verdict.message
        raise _denied(FAILED.format(method="ValidateAlgorithmSettings", reason=reason))


def _denied(message: str) -> Denied:
    return Denied(Decision(allowed=False, message=message))
