"""``hyperband``'s search quality beside Optuna's random sampler under its ``HyperbandPruner``.

Optuna has no sampler of Katib's hyperband (a schedule of brackets whose Trials each run at one
rung's resource); the nearest thing used directly is a ``RandomSampler`` with the same seed
under a ``HyperbandPruner`` of the same maximum resource and reduction factor, each of whose
trials reports its value at every resource step and is stopped when the pruner says so. The
two count a Trial differently (ours runs at one resource, Optuna's runs until it is pruned), so
each is reported at 50 and 200 Trials with the resource spent by then, and Optuna's also at the
resource ours spent (its first trials that fit in the epochs our run of that seed spent).

The function is Branin or Hartmann-6 observed through a training run of ``r`` epochs out of
``R`` = 81: ``f(x) + (1 - r / R) * bias(x)``, with ``bias(x)`` between 3 and 7 and depending on
``x``, so a short run ranks points only roughly, and a run of ``R`` epochs sees ``f`` itself.
Reported: the best value observed (what the Experiment shows as its optimal Trial), the true
value ``f`` of the point that observation came from, and the epochs spent.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

import optuna
from optuna.distributions import BaseDistribution, FloatDistribution
from optuna.trial import TrialState

from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.core.model import Experiment

Objective = Callable[[dict[str, float]], float]
R, ETA = 81, 3


def bias(x: dict[str, float]) -> float:
    return 5 + 2 * math.sin(3 * x["x0"]) * math.cos(2 * x["x1"])


def observed(f: Objective, x: dict[str, float], epochs: int) -> float:
    return f(x) + (1 - epochs / R) * bias(x)


def experiment(bounds: list[tuple[float, float]]) -> Experiment:
    parameters: list[dict[str, Any]] = [
        {
            "name": f"x{i}",
            "parameterType": "double",
            "feasibleSpace": {"min": str(a), "max": str(b)},
        }
        for i, (a, b) in enumerate(bounds)
    ]
    epochs = {"min": "1", "max": str(R)}
    parameters.append({"name": "epochs", "parameterType": "int", "feasibleSpace": epochs})
    settings = {"r_l": str(R), "eta": str(ETA), "resource_name": "epochs"}
    spec = {
        "algorithm": {
            "algorithmName": "hyperband",
            "algorithmSettings": [{"name": k, "value": v} for k, v in settings.items()],
        },
        "objective": {"type": "minimize", "objectiveMetricName": "f"},
        "parallelTrialCount": R,
        "parameters": parameters,
    }
    return Experiment.model_validate(
        {"metadata": {"name": "h", "namespace": "bench"}, "spec": spec}
    )


Run = list[tuple[float, float, int]]
"""Per Trial: the value observed, the true value of its point, the epochs it ran."""


def ours(subject: Experiment, f: Objective, budget: int, seed: int) -> Run:
    """Our service asked for one assignment at a time, every result told before the next."""
    server = SuggestionServer(subject, seed, None)
    server.start([])
    held: list[Any] = []
    results: dict[str, float | None] = {}
    run: Run = []
    while len(held) < budget:
        batch = server.get_suggestions(held, len(held) + 1, results)
        if not batch:
            break  # the schedule's last rung issued
        (item,) = batch
        values = {v["name"]: float(v["value"]) for v in item["parameterAssignments"]}
        epochs = int(values.pop("epochs"))
        results[item["name"]] = observed(f, values, epochs)
        held.append(item)
        run.append((results[item["name"]] or 0.0, f(values), epochs))
    return run


def direct(bounds: list[tuple[float, float]], f: Objective, budget: int, seed: int) -> Run:
    """Optuna's random sampler under its Hyperband pruner, each trial run epoch by epoch."""
    pruner = optuna.pruners.HyperbandPruner(min_resource=1, max_resource=R, reduction_factor=ETA)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed), pruner=pruner)
    space: dict[str, BaseDistribution] = {
        f"x{i}": FloatDistribution(a, b) for i, (a, b) in enumerate(bounds)
    }
    run: Run = []
    for _ in range(budget):
        trial = study.ask(space)
        x = {k: float(v) for k, v in trial.params.items()}
        value, epochs = math.inf, 0
        for epochs in range(1, R + 1):
            value = observed(f, x, epochs)
            trial.report(value, epochs)
            if trial.should_prune():
                study.tell(trial, state=TrialState.PRUNED)
                break
        else:
            study.tell(trial, value)
        run.append((value, f(x), epochs))
    return run


def at(run: Run, trials: int) -> dict[str, float]:
    """The best observation among the first ``trials``, its point's true value, the epochs."""
    first = run[:trials]
    best = min(first, key=lambda row: row[0])
    return {"observed": best[0], "true": best[1], "epochs": sum(row[2] for row in first)}


def within(run: Run, epochs: float) -> dict[str, float]:
    """``at`` for the trials that fit in ``epochs`` (Optuna's, at the epochs ours spent)."""
    spent, trials = 0, 0
    for _, _, ran in run:
        if spent + ran > epochs:
            break
        spent, trials = spent + ran, trials + 1
    return at(run, max(trials, 1))


def quality(
    functions: dict[str, tuple[Objective, list[tuple[float, float]], float]],
    seeds: int,
    budgets: tuple[int, ...],
) -> dict[str, Any]:
    """Medians over seeds of ``at`` for both, per function and budget."""
    report: dict[str, Any] = {}
    for name, (f, bounds, _) in functions.items():
        subject = experiment(bounds)
        mine = [ours(subject, f, max(budgets), s) for s in range(seeds)]
        theirs = [direct(bounds, f, max(budgets), s) for s in range(seeds)]
        entry: dict[str, Any] = {"seeds": seeds, "trials_issued": len(mine[0])}
        for budget in budgets:
            spent = [at(run, budget)["epochs"] for run in mine]
            sides = {
                "ours": [at(run, budget) for run in mine],
                "optuna": [at(run, budget) for run in theirs],
                "optuna_same_epochs": [within(r, e) for r, e in zip(theirs, spent, strict=True)],
            }
            entry[str(budget)] = {
                side: {
                    key: round(statistics.median(row[key] for row in rows), 4)
                    for key in ("observed", "true", "epochs")
                }
                for side, rows in sides.items()
            }
        report[f"{name}/hyperband"] = entry
    return report
