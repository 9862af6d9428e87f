"""The suggestion service's algorithms beside Optuna used directly: search quality, resume cost.

Quality: the best objective after 50 and 200 Trials on Branin (2-d, minimum 0.397887) and
Hartmann-6 (6-d, minimum -3.32237), one Trial at a time, for each algorithm, ours (the
``SuggestionServer``, as the embedded runtime drives it) and Optuna's study with the same
sampler and seed; medians over seeds, and their ratio (ours' gap to the optimum over Optuna's:
1.0 is equal, below is better). Our asks reseed the sampler per assignment (``ask_seed``), so
the two runs are different random draws of the same method, not the same sequence. ``random``
and ``grid``, written by hand, are set beside Optuna's ``RandomSampler`` and ``GridSampler``
(over the same cells: a step of 0.5 on Branin, 0.25 on Hartmann-6); ``hyperband`` beside
Optuna's ``RandomSampler`` under its ``HyperbandPruner`` (``algorithms_hyperband``).

Resume cost (``algorithms_resume``): restart to first new assignment, taken apart (the model
fit and the rest), and one call of a running service, with ``n`` = 100 / 1,000 / 5,000
completed Trials, for every algorithm above, beside Optuna's ``load_study`` on SQLite plus
``ask`` and its ``tell`` plus ``ask``; the restart of ``random``, ``grid``, ``hyperband``
and ``pbt`` (``algorithms_plain``); and the rebuild and fit of ``cmaes`` and ``sobol`` from a
history they grew themselves (``algorithms_grown``).

Run: ``python -m benchmarks.algorithms [--seeds N] [--only ALGORITHM] [--quick] [--repeats N]``;
prints JSON (progress on stderr). Medians over 10 seeds by default (1 for
``bayesianoptimization``), and of 5 restarts per resume size (``--repeats``). Each resume case
(an algorithm at a size) is measured in a process of its own (``isolated``).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import optuna
from optuna.distributions import FloatDistribution
from optuna.samplers import BaseSampler
from scipy.stats import mannwhitneyu

from benchmarks import isolated
from benchmarks.algorithms_grown import GROWN
from benchmarks.algorithms_grown import restart as grown_restart
from benchmarks.algorithms_hyperband import quality as hyperband_quality
from benchmarks.algorithms_plain import MODEL_FREE as PLAIN
from benchmarks.algorithms_plain import restart as plain_restart
from benchmarks.algorithms_resume import case as resume_case
from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.adapters.local.suggestion.algorithms import GridSearch, build
from katib_resume.adapters.local.suggestion.optuna_search import OptunaSearch
from katib_resume.adapters.local.suggestion.optuna_space import distributions
from katib_resume.core.model import Experiment

optuna.logging.set_verbosity(optuna.logging.ERROR)
warnings.simplefilter("ignore")
Objective = Callable[[dict[str, float]], float]

HARTMANN_A = [
    [10, 3, 17, 3.5, 1.7, 8],
    [0.05, 10, 17, 0.1, 8, 14],
    [3, 3.5, 1.7, 10, 17, 8],
    [17, 8, 0.05, 10, 0.1, 14],
]
HARTMANN_P = [
    [0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886],
    [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
    [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650],
    [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381],
]
HARTMANN_ALPHA = [1.0, 1.2, 3.0, 3.2]


def branin(v: dict[str, float]) -> float:
    x, y = v["x0"], v["x1"]
    b, c = 5.1 / (4 * math.pi**2), 5 / math.pi
    return (y - b * x * x + c * x - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x) + 10


def hartmann6(v: dict[str, float]) -> float:
    x = [v[f"x{i}"] for i in range(6)]
    total = 0.0
    for alpha, a, p in zip(HARTMANN_ALPHA, HARTMANN_A, HARTMANN_P, strict=True):
        total -= alpha * math.exp(
            -sum(ai * (xi - pi) ** 2 for ai, xi, pi in zip(a, x, p, strict=True))
        )
    return total


FUNCTIONS: dict[str, tuple[Objective, list[tuple[float, float]], float]] = {
    "branin": (branin, [(-5, 10), (0, 15)], 0.397887),
    "hartmann6": (hartmann6, [(0, 1)] * 6, -3.32237),
}
GRID_STEPS = {"branin": 0.5, "hartmann6": 0.25}
"""The grid's step per function: 31 x 31 cells for Branin, 5^6 for Hartmann-6 (more than 200)."""
ALGORITHMS = ["tpe", "multivariate-tpe", "cmaes", "sobol", "bayesianoptimization"]
"""The Optuna-backed algorithms: their quality, and their resume beside Optuna's."""
MODEL_FREE = ["random", "grid"]
"""Written by hand, their quality beside Optuna's ``RandomSampler`` and ``GridSampler``."""
SCHEDULED = ["hyperband"]
"""Beside Optuna's ``RandomSampler`` under its ``HyperbandPruner`` (``algorithms_hyperband``)."""


def experiment(
    algorithm: str, bounds: list[tuple[float, float]], seed: int, step: float | None = None
) -> Experiment:
    steps = {} if step is None else {"step": str(step)}
    parameters = [
        {
            "name": f"x{i}",
            "parameterType": "double",
            "feasibleSpace": {"min": str(lo), "max": str(hi), **steps},
        }
        for i, (lo, hi) in enumerate(bounds)
    ]
    spec = {
        "algorithm": {
            "algorithmName": algorithm,
            "algorithmSettings": [{"name": "random_state", "value": str(seed)}],
        },
        "objective": {"type": "minimize", "objectiveMetricName": "f"},
        "parameters": parameters,
    }
    return Experiment.model_validate(
        {"metadata": {"name": "b", "namespace": "bench"}, "spec": spec}
    )


def ours(subject: Experiment, f: Objective, budget: int) -> list[float]:
    """The best value after each Trial, our service asked for one assignment at a time."""
    server = SuggestionServer(subject, 0, None)
    server.start([])
    held: list[Any] = []
    results: dict[str, float | None] = {}
    best, trace = math.inf, []
    while len(held) < budget:
        (item,) = server.get_suggestions(held, len(held) + 1, results)
        value = f({v["name"]: float(v["value"]) for v in item["parameterAssignments"]})
        results[item["name"]] = value
        held.append(item)
        best = min(best, value)
        trace.append(best)
    return trace


def direct(subject: Experiment, f: Objective, budget: int, seed: int) -> list[float]:
    """The same with Optuna's study and one sampler of the same kind and seed."""
    search = build(subject, 0)
    sampler: BaseSampler
    if isinstance(search, OptunaSearch):
        sampler = search.make(seed)
    else:
        sampler = optuna.samplers.RandomSampler(seed=seed)
    space = distributions(search.space)
    if isinstance(search, GridSearch):  # the same cells' values, asked for as values
        cells = {
            p.name: [float(p.value(i)) for i in range(p.count or 0)]
            for p in search.space.parameters
        }
        sampler = optuna.samplers.GridSampler(cells, seed=seed)
        space = {k: FloatDistribution(min(v), max(v)) for k, v in cells.items()}
    study = optuna.create_study(sampler=sampler)
    best, trace = math.inf, []
    for _ in range(budget):
        trial = study.ask(space)
        value = f({k: float(v) for k, v in trial.params.items()})
        study.tell(trial, value)
        best = min(best, value)
        trace.append(best)
    return trace


def quality(
    seeds: int, budgets: tuple[int, ...], algorithms: list[str], bayes_seeds: int
) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for name, (f, bounds, optimum) in FUNCTIONS.items():
        for algorithm in algorithms:
            count = bayes_seeds if algorithm == "bayesianoptimization" else seeds  # a GP per ask
            step = GRID_STEPS[name] if algorithm == "grid" else None
            runs = [(experiment(algorithm, bounds, s, step), s) for s in range(count)]
            mine = [ours(subject, f, max(budgets)) for subject, _ in runs]
            theirs = [direct(subject, f, max(budgets), s) for subject, s in runs]
            entry: dict[str, Any] = {"seeds": count}
            for budget in budgets:
                entry[str(budget)] = compare(
                    [t[budget - 1] for t in mine], [t[budget - 1] for t in theirs], optimum
                )
            report[f"{name}/{algorithm}"] = entry
            print(f"{name}/{algorithm}: {entry}", file=sys.stderr)
    return report


def compare(mine: list[float], theirs: list[float], optimum: float) -> dict[str, Any]:
    """Medians over seeds, the ratio of their gaps to the optimum, and the two-sided
    Mann-Whitney U p-value of "the two sets of runs come from the same distribution" (a small
    value says the difference is not noise; ``None`` with fewer than 3 seeds)."""
    a, b = statistics.median(mine), statistics.median(theirs)
    p_value = mannwhitneyu(mine, theirs).pvalue if len(mine) >= 3 else None
    return {
        "ours": round(a, 5),
        "optuna": round(b, 5),
        "gap_ratio": round((a - optimum) / max(b - optimum, 1e-12), 3),
        "p_value": None if p_value is None else round(float(p_value), 3),
    }


def _case(kind: str, algorithm: str, n: int, repeats: int) -> dict[str, Any]:
    """One case's figures (``isolated.KINDS``), measured in this process."""
    if kind == "model-free":
        return plain_restart(algorithm, n, repeats)
    subject = experiment(algorithm, FUNCTIONS["branin"][1], 0)
    if kind == "grown":
        return grown_restart(subject, n, branin, repeats)
    return resume_case(subject, n, repeats, branin)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--bayes-seeds", type=int, default=1, help="a regressor fit per ask")
    parser.add_argument(
        "--only", action="append", choices=ALGORITHMS + MODEL_FREE + SCHEDULED, help="repeatable"
    )
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-resume", action="store_true")
    parser.add_argument("--quick", action="store_true", help="budgets 20/50, resume 100/1,000")
    parser.add_argument("--repeats", type=int, default=5, help="restarts timed per resume size")
    parser.add_argument("--case", nargs=3, help=argparse.SUPPRESS)  # (isolated.case's child)
    args = parser.parse_args()
    if args.case:
        kind, algorithm, n = args.case
        if kind not in isolated.KINDS:
            parser.error(f"--case: no case {kind!r}")
        return print(json.dumps(_case(kind, algorithm, int(n), args.repeats)))
    budgets = (20, 50) if args.quick else (50, 200)
    sizes = (100, 1000) if args.quick else (100, 1000, 5000)
    out: dict[str, Any] = {"optuna": optuna.__version__}
    if not args.skip_resume:
        modelled = tuple(a for a in args.only or ALGORITHMS if a in ALGORITHMS)
        measure = partial(isolated.case, repeats=args.repeats)
        out["resume"] = isolated.cases("resume", modelled, sizes, partial(measure, "resume"))
        measure = partial(isolated.case, repeats=5)
        plain = partial(measure, "model-free")
        out["restart_model_free"] = isolated.cases("restart", PLAIN, sizes, plain)
        regrown = tuple(a for a in args.only or ALGORITHMS if a in GROWN)
        out["restart_grown"] = isolated.cases("grown", regrown, sizes, partial(measure, "grown"))
    if not args.skip_quality:
        chosen = args.only or ALGORITHMS + MODEL_FREE + SCHEDULED
        sampled = [a for a in chosen if a not in SCHEDULED]
        out["best_objective"] = quality(args.seeds, budgets, sampled, args.bayes_seeds)
        if "hyperband" in chosen:
            out["best_objective_hyperband"] = hyperband_quality(FUNCTIONS, args.seeds, budgets)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
