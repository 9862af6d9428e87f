"""Defaulting (``core.defaults``): Katib's ``SetDefault`` values, and idempotence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.core.defaults import (
    EDITABLE_FIELDS,
    default_experiment,
    spec_view,
    without_editable,
)
from katib_resume.core.model import Experiment

DATA = Path(__file__).parent.parent / "data"


def experiment(**spec: Any) -> Experiment:
    data = {"algorithm": {"algorithmName": "random"}, **spec}
    return Experiment.model_validate({"metadata": {"name": "e"}, "spec": data})


def extras(exp: Experiment) -> dict[str, Any]:
    return dict(exp.spec.model_extra or {})


def test_example_gets_katibs_defaults() -> None:
    raw = yaml.safe_load((DATA / "from-volume-resume.yaml").read_text())
    raw["spec"].pop("parallelTrialCount")
    raw["spec"].pop("resumePolicy")
    spec = default_experiment(Experiment.model_validate(raw)).to_dict()["spec"]
    assert spec["parallelTrialCount"] == 3
    assert spec["resumePolicy"] == "Never"
    assert spec["maxTrialCount"] == 12
    assert spec["metricsCollectorSpec"] == {"collector": {"kind": "StdOut"}}
    assert spec["objective"]["metricStrategies"] == [{"name": "loss", "value": "min"}]
    assert [p["feasibleSpace"] for p in spec["parameters"]] == [
        {"min": "0.01", "max": "0.05", "distribution": "uniform"},
        {"min": "0.5", "max": "0.9", "distribution": "uniform"},
    ]


def test_budget_fields_are_never_defaulted() -> None:
    spec = default_experiment(experiment()).spec
    assert spec.max_trial_count is None
    assert spec.max_failed_trial_count is None


@pytest.mark.parametrize("policy", [None, ""])
def test_empty_policy_becomes_never(policy: str | None) -> None:
    assert default_experiment(experiment(resumePolicy=policy)).spec.resume_policy == "Never"


def test_given_values_are_kept() -> None:
    given_spec = {
        "parallelTrialCount": 1,
        "resumePolicy": "FromVolume",
        "metricsCollectorSpec": {
            "collector": {"kind": "File"},
            "source": {"fileSystemPath": {"kind": "File", "path": "/m.json", "format": "JSON"}},
        },
        "parameters": [{"name": "x", "feasibleSpace": {"distribution": "logUniform"}}],
        "trialTemplate": {
            "successCondition": "status.done",
            "failureCondition": "status.bad",
            "trialSpec": {"apiVersion": "batch/v1", "kind": "Job"},
        },
    }
    exp = experiment(**given_spec)
    assert default_experiment(exp) is exp


@pytest.mark.parametrize(
    ("objective_type", "value"), [("minimize", "min"), ("maximize", "max"), ("other", "latest")]
)
def test_metric_strategies_follow_the_objective_type(objective_type: str, value: str) -> None:
    objective = {
        "type": objective_type,
        "objectiveMetricName": "loss",
        "additionalMetricNames": ["acc", "f1"],
        "metricStrategies": [{"name": "acc", "value": "latest"}],
    }
    defaulted = default_experiment(experiment(objective=objective)).spec.objective
    assert defaulted is not None
    assert defaulted.metric_strategies == (
        {"name": "acc", "value": "latest"},
        {"name": "loss", "value": value},
        {"name": "f1", "value": value},
    )


def test_a_strategy_whose_name_is_not_a_string_is_left_alone() -> None:
    """Found by the webhook fuzz: a list as a name used to raise (unhashable) while defaulting."""
    odd = {"name": ["loss"], "value": "min"}
    objective = {"type": "minimize", "objectiveMetricName": "loss", "metricStrategies": [odd]}
    spec = default_experiment(experiment(objective=objective)).to_dict()["spec"]
    assert spec["objective"]["metricStrategies"] == [odd, {"name": "loss", "value": "min"}]


def test_collector_is_added_to_a_spec_without_one() -> None:
    exp = experiment(metricsCollectorSpec={"source": {"x": 1}})
    assert extras(default_experiment(exp))["metricsCollectorSpec"] == {
        "source": {"x": 1},
        "collector": {"kind": "StdOut"},
    }


def test_parameter_without_feasible_space_gets_a_distribution() -> None:
    exp = experiment(parameters=[{"name": "x"}, "not-a-mapping"])
    assert extras(default_experiment(exp))["parameters"] == [
        {"name": "x", "feasibleSpace": {"distribution": "uniform"}},
        "not-a-mapping",
    ]


def test_spec_view_ignores_defaults_emptiness_and_key_order() -> None:
    stored = experiment(parameters=[{"feasibleSpace": {"max": "1", "min": "0"}, "name": "x"}])
    edited = experiment(
        parallelTrialCount=3,
        resumePolicy="",
        nasConfig=None,
        parameters=[{"name": "x", "feasibleSpace": {"min": "0", "max": "1", "step": ""}}],
    )
    assert spec_view(stored) == spec_view(edited)
    budget = experiment(maxTrialCount=4, maxFailedTrialCount=1, parallelTrialCount=2)
    assert spec_view(experiment()) != spec_view(budget)
    assert without_editable(spec_view(experiment())) == without_editable(spec_view(budget))


def test_spec_view_counts_a_nan_goal_as_equal_to_itself() -> None:
    def objective() -> dict[str, Any]:  # a NaN of its own each time
        return {"type": "maximize", "goal": float("nan"), "objectiveMetricName": "m"}

    first, second = experiment(objective=objective()), experiment(objective=objective())
    assert first.spec.objective is not None and second.spec.objective is not None
    assert first.spec.objective.goal is not second.spec.objective.goal
    assert spec_view(first) == spec_view(second)
    other = experiment(objective={**objective(), "goal": 0.5})
    assert spec_view(other) != spec_view(first)
    assert spec_view(other)["objective"] == {**objective(), "goal": 0.5, **STRATEGY}


STRATEGY = {"metricStrategies": [{"name": "m", "value": "max"}]}


def test_a_metric_named_twice_gets_one_strategy() -> None:
    objective = {"type": "minimize", "objectiveMetricName": "loss"}
    exp = experiment(objective={**objective, "additionalMetricNames": ["loss", "acc", "acc"]})
    defaulted = default_experiment(exp).spec.objective
    assert defaulted is not None
    assert defaulted.metric_strategies == (
        {"name": "loss", "value": "min"},
        {"name": "acc", "value": "min"},
    )


@pytest.mark.parametrize(
    ("kind", "source"),
    [
        (
            "File",
            {
                "fileSystemPath": {
                    "kind": "File",
                    "path": "/var/log/katib/metrics.log",
                    "format": "TEXT",
                }
            },
        ),
        (
            "TensorFlowEvent",
            {"fileSystemPath": {"kind": "Directory", "path": "/var/log/katib/tfevent/"}},
        ),
        ("PrometheusMetric", {"httpGet": {"path": "/metrics", "port": 8080}}),
    ],
)
def test_a_collector_gets_its_kinds_source(kind: str, source: dict[str, Any]) -> None:
    spec = {"metricsCollectorSpec": {"collector": {"kind": kind}}}
    collector = extras(default_experiment(experiment(**spec)))["metricsCollectorSpec"]
    assert collector == {"collector": {"kind": kind}, "source": source}


def test_a_file_collector_with_a_path_gets_only_the_format() -> None:
    given = {
        "collector": {"kind": "File"},
        "source": {"fileSystemPath": {"kind": "File", "path": "/m"}},
    }
    collector = extras(default_experiment(experiment(metricsCollectorSpec=given)))
    assert collector["metricsCollectorSpec"]["source"]["fileSystemPath"]["format"] == "TEXT"


JOB = 'status.conditions.#(type=="Complete")#|#(status=="True")#'
FAILED = 'status.conditions.#(type=="Failed")#|#(status=="True")#'
KUBEFLOW = 'status.conditions.#(type=="Succeeded")#|#(status=="True")#'


@pytest.mark.parametrize(
    ("kind", "success", "labels"),
    [
        ("Job", JOB, None),
        ("TFJob", KUBEFLOW, {"training.kubeflow.org/job-role": "master"}),
        ("PyTorchJob", KUBEFLOW, {"training.kubeflow.org/job-role": "master"}),
        ("XGBoostJob", KUBEFLOW, {"training.kubeflow.org/job-role": "master"}),
        ("MPIJob", KUBEFLOW, {"training.kubeflow.org/job-role": "master"}),
        (
            "TrainJob",
            JOB,
            {
                "jobset.sigs.k8s.io/replicatedjob-name": "node",
                "batch.kubernetes.io/job-completion-index": "0",
            },
        ),
    ],
)
def test_an_inline_template_gets_its_kinds_conditions(
    kind: str, success: str, labels: dict[str, str] | None
) -> None:
    template = {"primaryContainerName": "c", "trialSpec": {"apiVersion": "v", "kind": kind}}
    defaulted = extras(default_experiment(experiment(trialTemplate=template)))["trialTemplate"]
    assert (defaulted["successCondition"], defaulted["failureCondition"]) == (success, FAILED)
    assert defaulted.get("primaryPodLabels") == labels


def test_a_template_of_another_kind_or_from_a_config_map_gets_no_conditions() -> None:
    for template in (
        {"trialSpec": {"apiVersion": "tekton.dev/v1beta1", "kind": "PipelineRun"}},
        {"configMap": {"configMapName": "t", "configMapNamespace": "n", "templatePath": "p"}},
    ):
        exp = experiment(trialTemplate=template)
        assert extras(default_experiment(exp))["trialTemplate"] == template


def test_a_given_condition_is_kept_and_only_the_missing_one_added() -> None:
    template = {
        "successCondition": "status.ok",
        "trialSpec": {"apiVersion": "batch/v1", "kind": "Job"},
    }
    defaulted = extras(default_experiment(experiment(trialTemplate=template)))["trialTemplate"]
    assert (defaulted["successCondition"], defaulted["failureCondition"]) == ("status.ok", FAILED)


# --- idempotence ----------------------------------------------------------------------------

names = st.text(alphabet="abcxyz_-", max_size=4)
values = st.none() | st.integers() | st.text(max_size=3) | st.floats() | st.booleans()
json_like = st.recursive(
    values,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=8,
)
maybe_text = st.none() | st.sampled_from(["", "Never", "LongRunning", "uniform", "loss", "x"])
parameters = st.lists(
    json_like
    | st.fixed_dictionaries(
        {"name": names},
        optional={
            "feasibleSpace": st.none() | st.dictionaries(st.just("distribution"), maybe_text)
        },
    ),
    max_size=3,
)
objectives = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "type": st.none() | st.sampled_from(["minimize", "maximize", "other"]),
        "objectiveMetricName": st.none() | names,
        "additionalMetricNames": st.lists(names, max_size=3),
        "metricStrategies": st.lists(
            st.fixed_dictionaries({"name": names, "value": names}), max_size=3
        ),
    },
)
collectors = json_like | st.fixed_dictionaries(
    {
        "collector": st.fixed_dictionaries(
            {
                "kind": st.sampled_from(
                    ["File", "TensorFlowEvent", "PrometheusMetric", "StdOut", "x"]
                )
            }
        )
    },
    optional={
        "source": json_like
        | st.fixed_dictionaries({}, optional={"fileSystemPath": json_like, "httpGet": json_like})
    },
)
templates = json_like | st.fixed_dictionaries(
    {
        "trialSpec": json_like
        | st.fixed_dictionaries(
            {"kind": st.sampled_from(["Job", "TFJob", "TrainJob", "PipelineRun", ""])}
        )
    },
    optional={
        "successCondition": maybe_text,
        "failureCondition": maybe_text,
        "primaryPodLabels": st.none() | st.dictionaries(names, names, max_size=2),
    },
)
specs = st.fixed_dictionaries(
    {},
    optional={
        "parallelTrialCount": st.none() | st.integers(),
        "maxTrialCount": st.none() | st.integers(),
        "maxFailedTrialCount": st.none() | st.integers(),
        "resumePolicy": maybe_text,
        "objective": objectives,
        "metricsCollectorSpec": collectors,
        "parameters": parameters | json_like,
        "trialTemplate": templates,
    },
)


@settings(deadline=None)
@given(specs)
def test_defaulting_is_idempotent(spec: dict[str, Any]) -> None:
    once = default_experiment(experiment(**spec))
    assert default_experiment(once) is once
    assert once.spec.max_trial_count == spec.get("maxTrialCount")
    assert once.spec.max_failed_trial_count == spec.get("maxFailedTrialCount")
    assert spec_view(once) == spec_view(experiment(**spec))


@settings(deadline=None)
@given(specs, st.integers(1, 100), st.integers(1, 100), st.integers(0, 100))
def test_an_edit_of_the_editable_fields_alone_leaves_the_rest_of_the_view_equal(
    spec: dict[str, Any], budget: int, parallel: int, failures: int
) -> None:
    edited = {
        **spec,
        "maxTrialCount": budget,
        "parallelTrialCount": parallel,
        "maxFailedTrialCount": failures,
    }
    before, after = spec_view(experiment(**spec)), spec_view(experiment(**edited))
    assert without_editable(before) == without_editable(after)
    assert not without_editable(after).keys() & EDITABLE_FIELDS
