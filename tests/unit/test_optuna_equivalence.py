"""Our Optuna-backed searches ask exactly what Optuna's own study asks with the same samplers.

The only thing ours does differently is seeding: every ask has a sampler of its own, seeded by
``(seed, assignment index)`` (``samplers.ask_seed``). Driven the same way, a plain Optuna study
(its own storage, its own search-space inference, ``Study.tell``) gives the same assignments
one by one, so what our service adds (the known search space, the one-pass rebuild, telling
without copies, the string values of the Trials) changes nothing, and a difference in search
quality between ours and Optuna used directly is a difference of random draws, not of method.
"""

from __future__ import annotations

import math

import optuna
import pytest

from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.adapters.local.suggestion.algorithms import build
from katib_resume.adapters.local.suggestion.optuna_search import OptunaSearch
from katib_resume.adapters.local.suggestion.optuna_space import distributions
from katib_resume.adapters.local.suggestion.samplers import Delegate, ask_seed
from katib_resume.core.model import Experiment

TRIALS = 24


def branin(x: float, y: float) -> float:
    b, c = 5.1 / (4 * math.pi**2), 5 / math.pi
    return (y - b * x * x + c * x - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x) + 10


def experiment(algorithm: str) -> Experiment:
    parameters = [
        {"name": "x", "parameterType": "double", "feasibleSpace": {"min": "-5", "max": "10"}},
        {"name": "y", "parameterType": "double", "feasibleSpace": {"min": "0", "max": "15"}},
    ]
    spec = {
        "algorithm": {
            "algorithmName": algorithm,
            "algorithmSettings": [{"name": "random_state", "value": "3"}],
        },
        "objective": {"type": "minimize", "objectiveMetricName": "f"},
        "parameters": parameters,
    }
    return Experiment.model_validate({"metadata": {"name": "e", "namespace": "n"}, "spec": spec})


def ours(subject: Experiment) -> list[tuple[float, float]]:
    server = SuggestionServer(subject, 0, None)
    server.start([])
    held: list[dict[str, object]] = []
    results: dict[str, float | None] = {}
    points = []
    for _ in range(TRIALS):
        (item,) = server.get_suggestions(held, len(held) + 1, results)
        values = {v["name"]: float(v["value"]) for v in item["parameterAssignments"]}
        points.append((values["x"], values["y"]))
        results[item["name"]] = branin(values["x"], values["y"])
        held.append(item)
    return points


def optunas(subject: Experiment) -> list[tuple[float, float]]:
    search = build(subject, 0)
    assert isinstance(search, OptunaSearch)
    delegate = Delegate()
    study = optuna.create_study(sampler=delegate)
    space = distributions(search.space)
    points = []
    for index in range(TRIALS):
        delegate.current = search.make(ask_seed(search.seed, index))
        trial = study.ask(space)
        x, y = float(trial.params["x"]), float(trial.params["y"])
        points.append((x, y))
        study.tell(trial, branin(x, y))
    return points


@pytest.mark.parametrize("algorithm", ["tpe", "multivariate-tpe", "cmaes", "sobol"])
def test_ours_asks_what_optuna_asks_seeded_alike(algorithm: str) -> None:
    subject = experiment(algorithm)
    assert ours(subject) == optunas(subject)
