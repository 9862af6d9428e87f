"""Katib's settings for the Optuna-backed algorithms: their messages, mapping and batches."""

from __future__ import annotations

from typing import Any

import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from katib_resume.adapters.local.suggestion import SuggestionServer, parse_space, validate
from katib_resume.adapters.local.suggestion.optuna_space import distributions
from katib_resume.adapters.local.suggestion.space import ALL_DISTRIBUTIONS
from katib_resume.core.model import Experiment
from katib_resume.core.observed import Outcome

X: dict[str, Any] = {
    "name": "x",
    "parameterType": "double",
    "feasibleSpace": {"min": "-5", "max": "10"},
}
Y = {"name": "y", "parameterType": "int", "feasibleSpace": {"min": "0", "max": "15"}}
C = {"name": "c", "parameterType": "categorical", "feasibleSpace": {"list": ["a", "b"]}}


def experiment(
    algorithm: str, settings: dict[str, str] | None = None, params: Any = None
) -> Experiment:
    pairs = [{"name": k, "value": v} for k, v in (settings or {}).items()]
    spec = {
        "algorithm": {"algorithmName": algorithm, "algorithmSettings": pairs},
        "objective": {"type": "maximize", "objectiveMetricName": "score"},
        "parameters": params if params is not None else [X, Y, C],
    }
    return Experiment.model_validate({"metadata": {"name": "exp", "namespace": "ns"}, "spec": spec})


def log_double(low: str) -> dict[str, Any]:
    return {
        "name": "lr",
        "parameterType": "double",
        "feasibleSpace": {"min": low, "max": "1", "distribution": "logUniform"},
    }


@pytest.mark.parametrize(
    ("subject", "message"),
    [
        (experiment("tpe", {"gamma": "1"}), "gamma should be in the range of (0, 1)"),
        (experiment("tpe", {"prior_weight": "0"}), "prior_weight should be great than zero"),
        (experiment("tpe", {"n_EI_candidates": "0"}), "n_EI_candidates should be great than zero"),
        (
            experiment("tpe", {"random_state": "-1"}),
            "random_state should be great or equal than zero",
        ),
        (
            experiment("tpe", {"gamma": "x"}),
            "failed to validate gamma(x): could not convert string to float: 'x'",
        ),
        (
            experiment("tpe", {"n_startup_trials": "3"}),
            "unknown setting n_startup_trials for algorithm tpe",
        ),
        (
            experiment("multivariate-tpe", {"n_startup_trials": "-2"}),
            "n_startup_trials should be greate or equal than zero",
        ),
        (
            experiment("multivariate-tpe", {"gamma": "0.2"}),
            "unknown setting gamma for algorithm multivariate-tpe",
        ),
        (
            experiment("multivariate-tpe", {"n_ei_candidates": "-1"}),
            "n_ei_candidates should be greate or equal than zero",
        ),
        (
            experiment("multivariate-tpe", {"n_ei_candidates": "0"}),
            "n_ei_candidates should be great than zero",  # Katib's admits it, then fails
        ),
        (
            experiment("multivariate-tpe", {"random_state": "-1"}),
            "random_state should be greate or equal than zero",
        ),
        (
            experiment("multivariate-tpe", {"n_startup_trials": "ten"}),
            "failed to validate n_startup_trials(ten): invalid literal for int() with base 10:"
            " 'ten'",
        ),
        (
            experiment("bayesianoptimization", {"random_state": "-1"}),
            "random_state should be great or equal than zero",
        ),
        (
            experiment("cmaes", {"restart_strategy": "None"}),
            "Failed to create goptuna study and search space: invalid restart_strategy: 'None'",
        ),
        (
            experiment("cmaes", {"random_state": "seven"}),
            'Failed to create goptuna study and search space: strconv.Atoi: parsing "seven":'
            " invalid syntax",
        ),
        (
            experiment("cmaes", params=[X, C]),
            "CMA-ES only supports two or more dimensional continuous search space.",
        ),
        (
            experiment(
                "sobol",
                params=[{**X, "feasibleSpace": {**X["feasibleSpace"], "distribution": "normal"}}],
            ),
            "Unsupported distribution NORMAL for parameter x. The Optuna suggestion service"
            " supports only UNIFORM and LOG_UNIFORM for double parameters.",
        ),
        (
            experiment("bayesianoptimization", {"base_estimator": "SVM"}),
            "base_estimator SVM is not supported in Bayesian optimization",
        ),
        (
            experiment("bayesianoptimization", {"acq_func": "UCB"}),
            "acq_func UCB is not supported in Bayesian optimization",
        ),
        (
            experiment("bayesianoptimization", {"acq_optimizer": "adam"}),
            "acq_optimizer adam is not supported in Bayesian optimization",
        ),
        (
            experiment("bayesianoptimization", {"n_initial_points": "-1"}),
            "n_initial_points should be great or equal than zero",
        ),
        (
            experiment("bayesianoptimization", {"kappa": "2"}),
            "unknown setting kappa for algorithm bayesianoptimization",
        ),
        (
            experiment("tpe", params=[log_double("0")]),
            "parameter 'lr': a logUniform distribution needs min > 0, got 0",
        ),
    ],
)
def test_bad_settings_get_katibs_message(subject: Experiment, message: str) -> None:
    verdict = validate(subject)
    assert verdict.outcome is Outcome.INVALID
    assert verdict.message == message


def test_the_least_n_ei_candidates_admitted_runs_past_the_startup_trials() -> None:
    """Katib's Optuna service admits ``n_ei_candidates`` 0, and Optuna's TPE then fails at its
    first model-based ask; ours admits 1 and up, and the search runs on."""
    settings = {"n_ei_candidates": "1", "n_startup_trials": "0"}
    server = SuggestionServer(experiment("multivariate-tpe", settings), 3, None)
    server.start([])
    held: list[Any] = []
    for _ in range(3):
        results = {a["name"]: float(i) for i, a in enumerate(held)}
        held += server.get_suggestions(held, len(held) + 2, results)
    assert len(held) == 6


def test_sobol_reads_no_setting_not_even_random_state() -> None:
    """Goptuna's Sobol reads no setting; ours is scrambled by the search's seed alone."""

    def first(settings: dict[str, str]) -> list[Any]:
        server = SuggestionServer(experiment("sobol", settings), 3, None)
        server.start([])
        return [a["parameterAssignments"] for a in server.get_suggestions([], 3)]

    assert first({}) == first({"random_state": "1"}) == first({"random_state": "x"})


def test_unknown_settings_are_ignored_by_the_goptuna_algorithms() -> None:
    assert validate(experiment("sobol", {"whatever": "1"})).outcome is Outcome.VALID
    assert validate(experiment("cmaes", {"sigma": "0.5", "x": "y"})).outcome is Outcome.VALID


def test_the_space_maps_to_optuna_distributions() -> None:
    raw = [
        {
            "name": "i",
            "parameterType": "int",
            "feasibleSpace": {"min": "1", "max": "10", "step": "3"},
        },
        {
            "name": "li",
            "parameterType": "int",
            "feasibleSpace": {"min": "1", "max": "64", "distribution": "logUniform"},
        },
        {
            "name": "d",
            "parameterType": "double",
            "feasibleSpace": {"min": "0", "max": "1", "step": "0.25"},
        },
        log_double("0.001"),
        {"name": "k", "parameterType": "discrete", "feasibleSpace": {"list": ["1", "10"]}},
        C,
    ]
    got = distributions(parse_space(raw, ALL_DISTRIBUTIONS))
    assert got == {
        "i": IntDistribution(1, 10, step=3),
        "li": IntDistribution(1, 64, log=True),
        "d": IntDistribution(0, 4),  # the index of 0, 0.25, ..., 1
        "lr": FloatDistribution(0.001, 1, log=True),
        "k": CategoricalDistribution(["1", "10"]),
        "c": CategoricalDistribution(["a", "b"]),
    }


@pytest.mark.parametrize(
    "algorithm", ["tpe", "multivariate-tpe", "cmaes", "sobol", "bayesianoptimization"]
)
def test_a_batch_never_holds_one_point_twice(algorithm: str) -> None:
    """Katib's TPE gave every item of a batch the same values (#1329); a small finite space
    makes a sampler's repeats likely, and they are replaced while unseen points remain."""
    small = [
        {"name": "a", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "3"}},
        {"name": "b", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "2"}},
    ]
    server = SuggestionServer(experiment(algorithm, params=small), 3, None)
    server.start([])
    held: list[Any] = []
    for _ in range(3):
        results = {a["name"]: 1.0 for a in held}
        held += server.get_suggestions(held, len(held) + 2, results)
    points = [tuple(v["value"] for v in a["parameterAssignments"]) for a in held]
    assert len(set(points)) == 6


def test_an_exhausted_grid_says_so() -> None:
    space = [{"name": "a", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "2"}}]
    server = SuggestionServer(experiment("grid", params=space), 0, None)
    server.start([])
    held = server.get_suggestions([], 3)
    assert len(held) == 2
    assert server.exhausted(3) == (
        "the search is exhausted: it has issued every assignment it has (2 assignments)"
    )
    assert server.exhausted(2) == ""


def test_the_optuna_algorithms_are_named_once_for_settings_and_samplers() -> None:
    """``settings.ALGORITHMS`` names, without Optuna, the algorithms ``samplers`` builds."""
    from katib_resume.adapters.local.suggestion import settings
    from katib_resume.adapters.local.suggestion.samplers import FACTORIES

    assert tuple(FACTORIES) == settings.ALGORITHMS
    ruled = {*settings.RULES, *settings.GOPTUNA}
    assert set(settings.ALGORITHMS) <= ruled
    assert ruled - set(settings.ALGORITHMS) == {"random", "grid"}  # written by hand
