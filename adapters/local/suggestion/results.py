"""What a finished Trial tells the search: its objective value, or that it failed.

Katib's services read a Trial's result from its observation (the value the metric strategy
picks, as the controller sends it). A Trial that succeeded or was early-stopped with a value is
a result; one that failed or was killed is a failure (the samplers stop counting it as running,
where Katib's Optuna service left it running for ever); one still running, or finished without
a value (its metrics unavailable), tells nothing yet. A NaN objective is passed on as it is:
the service gives it its meaning (``nonfinite``: a failure), so that a Trial that finished with
one is not waited for as if it were still running.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from katib_resume.core.model import Experiment, Trial
from katib_resume.core.objective import ObjectiveType, observed_raw, parse_number, strategy_for
from katib_resume.core.trial_phases import TrialPhase
from katib_resume.core.trials import classify

Results = Mapping[int, float | None]
"""What a search knows of the issued points' Trials, by assignment index: the objective value,
or ``None`` for a failed Trial (a point without an entry tells nothing yet)."""
_VALUED = (TrialPhase.SUCCEEDED, TrialPhase.EARLY_STOPPED)
_FAILED = (TrialPhase.FAILED, TrialPhase.KILLED)


def trial_results(experiment: Experiment, trials: Iterable[Trial]) -> dict[str, float | None]:
    """Trial name -> objective value (``None``: failed) for the Trials that have finished."""
    objective = experiment.spec.objective
    if objective is None or not objective.objective_metric_name:
        return {}
    try:
        direction = ObjectiveType(objective.type or "")
    except ValueError:
        return {}
    metric, strategy = objective.objective_metric_name, strategy_for(objective, direction)
    results: dict[str, float | None] = {}
    for trial in trials:
        phase = classify(trial)
        if phase in _FAILED:
            results[trial.metadata.name] = None
        elif phase in _VALUED:
            value = parse_number(observed_raw(trial, metric, strategy))
            if value is not None:
                results[trial.metadata.name] = value
    return results
