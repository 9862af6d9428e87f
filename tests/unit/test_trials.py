"""Table tests for trial accounting (core.trials) and the objective (core.objective)."""

from __future__ import annotations

from typing import Any

import pytest

from katib_resume.core.conditions import ConditionSpec
from katib_resume.core.katib import (
    EXP_GOAL_REACHED,
    EXP_MAX_FAILED,
    EXP_MAX_TRIALS,
    LABEL_EXPERIMENT,
)
from katib_resume.core.model.experiment import Experiment, ExperimentSpec, ObjectiveSpec
from katib_resume.core.model.trial import Trial
from katib_resume.core.objective import Optimum, best_trial, goal_reached, parse_metric
from katib_resume.core.trial_phases import COMPLETED_PHASES, TrialPhase
from katib_resume.core.trials import (
    TrialCounts,
    classify,
    completion,
    count_trials,
    own_trials,
    replace_status_counts,
    status_counts,
    trials_to_create,
    trials_to_delete,
)

P = TrialPhase
EXP_UID = "uid-exp"


def trial(
    name: str,
    conditions: list[tuple[str, str]] | None = None,
    *,
    namespace: str | None = "kubeflow",
    labels: dict[str, str] | None = None,
    owners: list[dict[str, Any]] | None = None,
    metrics: list[dict[str, Any]] | None = None,
) -> Trial:
    """A Trial as Katib's JSON; conditions are (type, status) pairs."""
    metadata: dict[str, Any] = {
        "name": name,
        "labels": {LABEL_EXPERIMENT: "exp"} if labels is None else labels,
        "ownerReferences": owners or [],
    }
    if namespace is not None:
        metadata["namespace"] = namespace
    status: dict[str, Any] = {"conditions": [{"type": t, "status": s} for t, s in conditions or []]}
    if metrics is not None:
        status["observation"] = {"metrics": metrics}
    return Trial.model_validate({"metadata": metadata, "status": status})


def spec(**fields: Any) -> ExperimentSpec:
    return ExperimentSpec.model_validate({"algorithm": {"algorithmName": "random"}, **fields})


def experiment(namespace: str = "kubeflow", uid: str | None = EXP_UID) -> Experiment:
    metadata: dict[str, Any] = {"name": "exp", "namespace": namespace}
    if uid is not None:
        metadata["uid"] = uid
    return Experiment.model_validate({"metadata": metadata, "spec": spec().to_dict()})


def counts(**per_phase: int) -> TrialCounts:
    """TrialCounts with ``n`` generated names per phase, e.g. ``counts(succeeded=2)``."""
    return TrialCounts(
        **{f"{k}_trials": tuple(f"{k}-{i}" for i in range(n)) for k, n in per_phase.items()}
    )


# --- classification (docs/katib-contract.md#trial-phases) -----------------------------------

T, F, U = "True", "False", "Unknown"


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ([], P.PENDING),
        ([("Created", T)], P.PENDING),
        ([("Created", T), ("Running", T)], P.RUNNING),
        ([("Running", F), ("Succeeded", T)], P.SUCCEEDED),
        ([("Succeeded", T), ("Killed", T)], P.KILLED),
        ([("Succeeded", T), ("Failed", T)], P.FAILED),
        ([("Failed", T), ("Killed", T)], P.KILLED),
        ([("EarlyStopped", T), ("Succeeded", T)], P.SUCCEEDED),
        ([("Running", T), ("EarlyStopped", T)], P.EARLY_STOPPED),
        ([("MetricsUnavailable", T), ("Running", T)], P.RUNNING),
        ([("MetricsUnavailable", T)], P.METRICS_UNAVAILABLE),
        ([("MetricsUnavailable", T), ("EarlyStopped", T)], P.EARLY_STOPPED),
        ([("Running", F), ("Succeeded", F)], P.PENDING),
        ([("Killed", U), ("Failed", T)], P.FAILED),
        ([("Killed", F), ("Running", T)], P.RUNNING),
    ],
)
def test_classify_first_match_order(conditions: list[tuple[str, str]], expected: P) -> None:
    assert classify(trial("t", conditions)) is expected


# --- ownership (bug 7) ----------------------------------------------------------------------


def owner(uid: str, *, controller: bool = True) -> dict[str, Any]:
    ref = {"apiVersion": "kubeflow.org/v1beta1", "kind": "Experiment", "name": "exp", "uid": uid}
    return {**ref, "controller": controller}


@pytest.mark.parametrize(
    ("candidate", "exp", "owned"),
    [
        (trial("t", owners=[owner(EXP_UID)]), experiment(), True),
        (trial("t"), experiment(), True),
        (trial("t", namespace="other", owners=[owner("uid-other")]), experiment(), False),
        (trial("t", namespace="other"), experiment(), False),
        (trial("t", labels={}), experiment(), False),
        (trial("t", labels={LABEL_EXPERIMENT: "exp2"}), experiment(), False),
        (trial("t", owners=[owner("uid-other")]), experiment(), False),
        (trial("t", owners=[owner("uid-other", controller=False)]), experiment(), True),
        (trial("t", owners=[owner("uid-other")]), experiment(uid=None), True),
        (trial("t", namespace=None), experiment(namespace="default"), True),
    ],
)
def test_own_trials(candidate: Trial, exp: Experiment, owned: bool) -> None:
    assert own_trials(exp, [candidate]) == ((candidate,) if owned else ())


def test_same_named_experiment_in_another_namespace_never_counts() -> None:
    mine = trial("a", [("Succeeded", T)], owners=[owner(EXP_UID)])
    theirs = trial("b", [("Succeeded", T)], namespace="team-b", owners=[owner("uid-b")])
    assert count_trials(own_trials(experiment(), [theirs, mine])).succeeded_trials == ("a",)


# --- counts ---------------------------------------------------------------------------------


def test_count_trials_sorts_names_and_derives_totals() -> None:
    population = [
        trial("c", [("Succeeded", T)]),
        trial("a", [("Succeeded", T)]),
        trial("b", [("MetricsUnavailable", T)]),
        trial("d", [("Failed", T)]),
        trial("e", [("Running", T)]),
        trial("f"),
        trial("g", [("Killed", T)]),
        trial("h", [("EarlyStopped", T)]),
    ]
    result = count_trials(population)
    assert result.succeeded_trials == ("a", "c")
    assert (result.completed, result.failed_total, result.active, result.total) == (6, 2, 2, 8)
    assert result.count(P.PENDING) == 1


@pytest.mark.parametrize("phase", list(TrialPhase))
def test_completed_counts_exactly_the_completed_phases(phase: TrialPhase) -> None:
    """``completed`` spells the phases out for speed; it must agree with the one definition."""
    names = ("x", "y")
    one_phase = TrialCounts(**{_FIELD[phase]: names})
    assert one_phase.completed == (len(names) if phase in COMPLETED_PHASES else 0)


_FIELD = {phase: f"{phase.name.lower()}_trials" for phase in TrialPhase}


def test_status_counts_uses_katib_names_and_omits_empty_lists() -> None:
    fields = status_counts(counts(succeeded=2, metrics_unavailable=1, running=1))
    assert fields == {
        "trials": 4,
        "trialsSucceeded": 2,
        "trialsFailed": 0,
        "trialsKilled": 0,
        "trialsPending": 0,
        "trialsRunning": 1,
        "trialsEarlyStopped": 0,
        "trialMetricsUnavailable": 1,
        "succeededTrialList": ["succeeded-0", "succeeded-1"],
        "runningTrialList": ["running-0"],
        "metricsUnavailableTrialList": ["metrics_unavailable-0"],
    }


def test_replace_status_counts_drops_lists_that_became_empty() -> None:
    old: dict[str, object] = {"conditions": [], "trials": 1, "runningTrialList": ["a"]}
    new = replace_status_counts(old, counts(succeeded=1))
    assert "runningTrialList" not in new
    assert (new["conditions"], new["trialsRunning"], new["succeededTrialList"]) == (
        [],
        0,
        ["succeeded-0"],
    )


# --- completion rule order (docs/katib-contract.md#trial-accounting) ------------------------


@pytest.mark.parametrize(
    ("fields", "per_phase", "goal", "expected"),
    [
        ({"maxTrialCount": 3, "maxFailedTrialCount": 1}, {"failed": 3}, True, EXP_GOAL_REACHED),
        ({"maxTrialCount": 3, "maxFailedTrialCount": 1}, {"failed": 3}, False, EXP_MAX_FAILED),
        (
            {"maxFailedTrialCount": 2},
            {"failed": 1, "metrics_unavailable": 1},
            False,
            EXP_MAX_FAILED,
        ),
        ({"maxFailedTrialCount": 2}, {"failed": 1}, False, None),
        ({"maxTrialCount": 3, "maxFailedTrialCount": 0}, {"succeeded": 2}, False, None),
        ({"maxTrialCount": 3, "maxFailedTrialCount": 0}, {"succeeded": 3}, False, EXP_MAX_TRIALS),
        ({"maxTrialCount": 3, "maxFailedTrialCount": 0}, {"failed": 1}, False, EXP_MAX_FAILED),
        ({"maxTrialCount": 3}, {"failed": 9}, False, EXP_MAX_TRIALS),
        ({"maxTrialCount": 3}, {"succeeded": 2, "metrics_unavailable": 1}, False, EXP_MAX_TRIALS),
        ({"maxTrialCount": 3}, {"succeeded": 2, "running": 5}, False, None),
        ({"maxTrialCount": 3}, {"killed": 1, "early_stopped": 2}, False, EXP_MAX_TRIALS),
        ({}, {"succeeded": 100}, False, None),
        ({}, {}, True, EXP_GOAL_REACHED),
    ],
)
def test_completion_first_matching_rule(
    fields: dict[str, int], per_phase: dict[str, int], goal: bool, expected: ConditionSpec | None
) -> None:
    """``maxFailedTrialCount: 0`` never fails an Experiment with no failures (Katib's ``!= 0``
    guard); its first failure fails it, as in Katib's ``failed != 0 && failed >= max``."""
    assert completion(spec(**fields), counts(**per_phase), goal) == expected


# --- trial creation arithmetic (bug 12) -----------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "per_phase", "create", "delete"),
    [
        ({}, {}, 3, 0),
        ({"parallelTrialCount": 5}, {"running": 2}, 3, 0),
        ({"maxTrialCount": 10, "parallelTrialCount": 3}, {"succeeded": 8}, 2, 0),
        ({"maxTrialCount": 10, "parallelTrialCount": 3}, {"succeeded": 8, "pending": 1}, 1, 0),
        ({"maxTrialCount": 5, "parallelTrialCount": 3}, {"succeeded": 7}, 0, 0),
        ({"parallelTrialCount": 2}, {"running": 3, "pending": 2}, 0, 3),
        ({"maxTrialCount": 5, "parallelTrialCount": 3}, {"succeeded": 2, "running": 1}, 2, 0),
    ],
)
def test_trials_to_create_and_delete(
    fields: dict[str, int], per_phase: dict[str, int], create: int, delete: int
) -> None:
    assert trials_to_create(spec(**fields), counts(**per_phase)) == create
    assert trials_to_delete(spec(**fields), counts(**per_phase)) == delete


def test_metrics_unavailable_trials_count_as_completed_for_creation() -> None:
    """Katib would create 2 more here (completed 2, not 4) and own 7 Trials for a budget of 5."""
    state = counts(succeeded=2, metrics_unavailable=2, running=1)
    experiment_spec = spec(maxTrialCount=5, parallelTrialCount=3)
    katib_completed = state.completed - state.count(P.METRICS_UNAVAILABLE)
    katib_add = max(min(5 - katib_completed, 3) - state.active, 0)
    assert state.total + katib_add == 7
    assert trials_to_create(experiment_spec, state) == 0


# --- objective (docs/katib-contract.md#trial-accounting) ------------------------------------


def objective(kind: str, goal: float | None, strategy: str | None = None) -> ObjectiveSpec:
    data: dict[str, Any] = {"type": kind, "objectiveMetricName": "m", "goal": goal}
    if strategy is not None:
        data["metricStrategies"] = [{"name": "m", "value": strategy}]
    return ObjectiveSpec.model_validate(data)


def measured(name: str, low: object, high: object, latest: object) -> Trial:
    metrics: list[dict[str, Any]] = [
        {"name": "other", "min": "-100", "max": "100", "latest": "0"},
        {"name": "m", "min": low, "max": high, "latest": latest},
    ]
    return trial(name, [("Succeeded", T)], metrics=metrics)


POPULATION = [measured("a", "0.2", "0.9", "0.5"), measured("b", "0.3", "0.8", "0.4")]


@pytest.mark.parametrize(
    ("spec_", "reached"),
    [
        (objective("minimize", 0.2), True),
        (objective("minimize", 0.19), False),
        (objective("maximize", 0.9), True),
        (objective("maximize", 0.91), False),
        (objective("minimize", 0.4, "latest"), True),
        (objective("minimize", 0.39, "latest"), False),
        (objective("maximize", 0.5, "latest"), True),
        (objective("minimize", 0.8, "max"), True),
        (objective("maximize", 0.3, "min"), True),
        (objective("maximize", 0.31, "min"), False),
        (objective("minimize", None), False),
        (objective("sideways", 10.0), False),
    ],
)
def test_goal_reached(spec_: ObjectiveSpec, reached: bool) -> None:
    assert goal_reached(spec_, POPULATION) is reached


def test_goal_ignores_unavailable_and_missing_observations() -> None:
    population = [measured("u", "unavailable", "unavailable", "unavailable"), trial("none")]
    assert not goal_reached(objective("minimize", 1e9), population)
    assert best_trial(objective("minimize", 1.0), population) is None
    assert not goal_reached(None, POPULATION)


def test_unavailable_min_or_max_falls_back_to_latest() -> None:
    population = [measured("u", "unavailable", "unavailable", "0.7")]
    assert best_trial(objective("minimize", None), population) == Optimum("u", 0.7)
    assert best_trial(objective("maximize", None), population) == Optimum("u", 0.7)
    assert best_trial(objective("minimize", None, "avg"), population) is None


def test_best_trial_name_value_and_tie_break() -> None:
    assert best_trial(objective("minimize", None), POPULATION) == Optimum("a", 0.2)
    assert best_trial(objective("maximize", None), POPULATION) == Optimum("a", 0.9)
    tie = [measured("z", 1, 1, 1), measured("y", 1.0, 1.0, 1.0)]
    assert best_trial(objective("maximize", None), tie) == Optimum("y", 1.0)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        *[("0.5", 0.5), (" 2 ", 2.0), (3, 3.0), ("1e-3", 0.001), ("-Inf", float("-inf"))],
        *[("unavailable", None), ("NaN", None), (True, None), (None, None), ("1_0", None)],
    ],
)
def test_parse_metric(raw: object, value: float | None) -> None:
    assert parse_metric(raw) == value
