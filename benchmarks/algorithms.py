"""The suggestion service's algorithms beside Optuna used directly: search quality, resume cost.

Quality: the best objective after 50 and 200 Trials on Branin (2-d, minimum 0.397887) and
Hartmann-6 (6-d, minimum -3.32237), one Trial at a time, for each algorithm, ours (the
``SuggestionServer``, as the embedded runtime drives it) and Optuna's study with the same
sampler and seed; medians over seeds, and their ratio (ours' gap to the optimum over Optuna's:
1.0 is equal, below is better). Our asks reseed the sampler per assignment (``ask_seed``), so
the two runs are different random draws of the same method, not the same sequence.

Resume cost: restart to first new assignment with ``n`` = 100 / 1,000 / 5,000 completed Trials
(TPE): ours is a new server reading its state file and answering the next ``GetSuggestions``;
Optuna's is ``load_study`` on SQLite and the first ``ask``. Medians of a few repeats.

Run: ``python -m benchmarks.algorithms [--seeds N] [--quick]``; prints JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import optuna
from optuna.samplers import BaseSampler

from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.adapters.local.suggestion import state as store
from katib_resume.adapters.local.suggestion.algorithms import build
from katib_resume.adapters.local.suggestion.assignments import assignment, name_for
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
ALGORITHMS = ["tpe", "multivariate-tpe", "cmaes", "sobol", "bayesianoptimization"]


def experiment(algorithm: str, bounds: list[tuple[float, float]], seed: int) -> Experiment:
    parameters = [
        {
            "name": f"x{i}",
            "parameterType": "double",
            "feasibleSpace": {"min": str(lo), "max": str(hi)},
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
    assert isinstance(search, OptunaSearch)
    sampler: BaseSampler = search.make(seed)
    study = optuna.create_study(sampler=sampler)
    space = distributions(search.space)
    best, trace = math.inf, []
    for _ in range(budget):
        trial = study.ask(space)
        value = f({k: float(v) for k, v in trial.params.items()})
        study.tell(trial, value)
        best = min(best, value)
        trace.append(best)
    return trace


def quality(seeds: int, budgets: tuple[int, ...]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for name, (f, bounds, optimum) in FUNCTIONS.items():
        for algorithm in ALGORITHMS:
            count = 1 if algorithm == "bayesianoptimization" else seeds  # a GP fit per ask
            runs = [(experiment(algorithm, bounds, s), s) for s in range(count)]
            mine = [ours(subject, f, max(budgets)) for subject, _ in runs]
            theirs = [direct(subject, f, max(budgets), s) for subject, s in runs]
            entry: dict[str, Any] = {"seeds": count}
            for budget in budgets:
                a = statistics.median(t[budget - 1] for t in mine)
                b = statistics.median(t[budget - 1] for t in theirs)
                entry[str(budget)] = {
                    "ours": round(a, 5),
                    "optuna": round(b, 5),
                    "gap_ratio": round((a - optimum) / max(b - optimum, 1e-12), 3),
                }
            report[f"{name}/{algorithm}"] = entry
            print(f"{name}/{algorithm}: {entry}", file=sys.stderr)
    return report


def saved_state(
    directory: Path, subject: Experiment, n: int
) -> tuple[list[Any], dict[str, float | None]]:
    """A state file of ``n`` finished random assignments, as our server would have saved it."""
    search = build(subject, 0)
    rng = random.Random(n)
    issued: list[Any] = []
    told: dict[str, float] = {}
    results: dict[str, float | None] = {}
    taken: set[str] = set()
    for index in range(n):
        point = search.space.sample(rng)
        name = name_for("b", 0, index, taken)
        taken.add(name)
        value = branin({k: float(v) for k, v in point})
        issued.append(assignment(name, point))
        told[str(index)] = value
        results[name] = value
    cursor = {**search.start(), "told": told}
    state = store.SearchState(
        "bench/b", "tpe", 0, search.space.fingerprint(), cursor, tuple(issued)
    )
    store.save(directory / store.FILE_NAME, state)
    return issued, results


def resume_ours(subject: Experiment, n: int, repeats: int) -> float:
    with tempfile.TemporaryDirectory() as directory:
        issued, results = saved_state(Path(directory), subject, n)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            server = SuggestionServer(subject, 0, Path(directory))
            report = server.start(issued)
            assert report.source == "restored", report.reason
            server.get_suggestions(issued, n + 1, results)
            times.append(time.perf_counter() - started)
            (Path(directory) / store.FILE_NAME).unlink()
            saved_state(Path(directory), subject, n)
    return statistics.median(times)


def resume_optuna(subject: Experiment, n: int, repeats: int) -> float:
    search = build(subject, 0)
    assert isinstance(search, OptunaSearch)
    space = distributions(search.space)
    rng = random.Random(n)
    trials = []
    for _ in range(n):
        params = {k: float(v) for k, v in search.space.sample(rng)}
        trials.append(
            optuna.trial.create_trial(params=params, distributions=space, value=branin(params))
        )
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite:///{directory}/study.db"
        optuna.create_study(storage=url, study_name="b").add_trials(trials)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            study = optuna.load_study(study_name="b", storage=url, sampler=search.make(0))
            study.ask(space)
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def resume(sizes: tuple[int, ...], repeats: int) -> dict[str, Any]:
    subject = experiment("tpe", FUNCTIONS["branin"][1], 0)
    report: dict[str, Any] = {}
    for n in sizes:
        a, b = resume_ours(subject, n, repeats), resume_optuna(subject, n, repeats)
        report[str(n)] = {
            "ours_s": round(a, 4),
            "optuna_sqlite_s": round(b, 4),
            "ratio": round(a / b, 3),
        }
        print(f"resume {n}: {report[str(n)]}", file=sys.stderr)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="budgets 20/50, resume 100/1,000")
    args = parser.parse_args()
    budgets = (20, 50) if args.quick else (50, 200)
    sizes = (100, 1000) if args.quick else (100, 1000, 5000)
    out = {
        "optuna": optuna.__version__,
        "resume_tpe": resume(sizes, repeats=3),
        "best_objective": quality(args.seeds, budgets),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
