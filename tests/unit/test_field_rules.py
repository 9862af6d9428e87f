"""Admission's field rules (``core.objective_rules``, ``core.parameter_rules``,
``core.template_rules``, ``core.collector_rules``): Katib's validator's cases, with its exact
texts, on Experiments defaulted as the mutating webhook leaves them."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.core.defaults import default_experiment
from katib_resume.core.model import Experiment
from katib_resume.core.validation import Decision, validate

EXAMPLE = Path(__file__).parents[2] / "examples" / "from-volume-resume.yaml"
RAW: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
TEMPLATE = "spec.trialTemplate"


def decided(change: Callable[[dict[str, Any]], object]) -> str:
    """Katib's message for the example changed by ``change`` (defaulted, then validated);
    "" when it is allowed."""
    return _decision(change).message


def texts(change: Callable[[dict[str, Any]], object]) -> list[str]:
    """Each error's text, in order."""
    return [error.text for error in _decision(change).errors]


def _decision(change: Callable[[dict[str, Any]], object]) -> Decision:
    raw = copy.deepcopy(RAW)
    change(raw["spec"])
    return validate(default_experiment(Experiment.model_validate(raw)))


def test_the_example_is_allowed() -> None:
    assert decided(lambda spec: None) == ""


def test_an_objective_error_stops_the_checks() -> None:
    def bad(spec: dict[str, Any]) -> None:
        spec["objective"]["type"] = "bogus"
        spec["parameters"] = []  # not reported: Katib stops at the objective

    assert (
        decided(bad) == 'spec.objective.type: Invalid value: "bogus": must be minimize or maximize'
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda s: s.pop("objective"),
            "spec.objective: Required value: must be specified",
        ),
        (
            lambda s: s["objective"].pop("objectiveMetricName"),
            "spec.objective.objectiveMetricName: Required value: must be specified",
        ),
        (
            lambda s: s["objective"].update(additionalMetricNames=["acc", "loss"]),
            'spec.objective.additionalMetricNames: Invalid value: []string{"acc", "loss"}: '
            "should not contain spec.objective.objectiveMetricName",
        ),
    ],
)
def test_objective_rules(change: Callable[[dict[str, Any]], object], message: str) -> None:
    assert decided(change) == message


def _parameter(**fields: Any) -> Callable[[dict[str, Any]], None]:
    def change(spec: dict[str, Any]) -> None:
        spec["parameters"][0] = {"name": "lr", **fields}

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda s: s.update(parameters=[]),
            "spec: Required value: spec.parameters or spec.nasConfig must be specified",
        ),
        (
            _parameter(parameterType="bogus", feasibleSpace={"min": "1", "max": "2"}),
            'spec.parameters[0].parameterType: Invalid value: "bogus": '
            "parameterType: bogus is not supported",
        ),
        (
            _parameter(
                parameterType="double",
                feasibleSpace={"min": "1", "max": "2", "distribution": "zipf"},
            ),
            'spec.parameters[0].feasibleSpace.distribution: Invalid value: "zipf": '
            "distribution: zipf is not supported",
        ),
        (
            _parameter(parameterType="int", feasibleSpace={"list": ["1", "2"]}),
            'spec.parameters[0].feasibleSpace.list: Invalid value: []string{"1", "2"}: '
            "feasibleSpace.list is not supported for parameterType: int, "
            "spec.parameters[0].feasibleSpace.max: Required value: feasibleSpace.max or "
            "feasibleSpace.min must be specified for parameterType: int",
        ),
        (
            _parameter(parameterType="categorical", feasibleSpace={"list": ["a"], "max": "2"}),
            "spec.parameters[0].feasibleSpace: Invalid value: "
            'v1beta1.FeasibleSpace{Max:"2", Min:"", List:[]string{"a"}, Step:"", '
            'Distribution:"uniform"}: feasibleSpace .max, .min and .step is not supported for '
            "parameterType: categorical",
        ),
    ],
)
def test_parameter_rules(change: Callable[[dict[str, Any]], object], message: str) -> None:
    assert decided(change).strip("[]") == message


def test_an_empty_feasible_space_is_required_before_defaulting() -> None:
    raw = copy.deepcopy(RAW)
    raw["spec"]["parameters"][0] = {"name": "lr", "parameterType": "double"}
    undefaulted = validate(Experiment.model_validate(raw))
    assert (
        "spec.parameters[0].feasibleSpace: Required value: feasibleSpace must be specified"
        in undefaulted.message
    )


def _template(change: Callable[[dict[str, Any]], object]) -> Callable[[dict[str, Any]], None]:
    def changed(spec: dict[str, Any]) -> None:
        change(spec["trialTemplate"])

    return changed


TRIAL_PARAMETERS = (
    "[{learningRate Learning rate for the training model lr} "
    "{momentum Momentum for the training model momentum}]"
)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            _template(lambda t: t.pop("primaryContainerName")),
            f"{TEMPLATE}.primaryContainerName: Required value: must be specified",
        ),
        (
            _template(lambda t: t["trialSpec"].update(kind="PipelineRun")),
            f"{TEMPLATE}: Required value: successCondition and failureCondition must be specified",
        ),
        (
            _template(lambda t: t.pop("trialParameters")),
            f"{TEMPLATE}.trialParameters: Required value: must be specified",
        ),
        (
            _template(lambda t: t.pop("trialSpec")),
            f"{TEMPLATE}.TrialSource: Required value: spec.trialTemplate.trialSpec or "
            "spec.trialTemplate.configMap must be specified",
        ),
        (
            _template(lambda t: t.update(configMap={"configMapName": "x"})),
            f"{TEMPLATE}: Required value: only one of spec.trialTemplate.trialSpec or "
            "spec.trialTemplate.configMap can be specified",
        ),
        (
            _template(lambda t: t["trialParameters"][1].update(name="learningRate")),
            f'{TEMPLATE}.trialParameters[1].name: Invalid value: "learningRate": parameter name '
            "learningRate can't be duplicated in spec.trialTemplate.trialParameters: "
            "[{learningRate Learning rate for the training model lr} "
            "{learningRate Momentum for the training model momentum}]",
        ),
        (
            _template(lambda t: t["trialParameters"][1].update(reference="lr")),
            f'{TEMPLATE}.trialParameters[1].reference: Invalid value: "lr": parameter reference '
            "lr can't be duplicated in spec.trialTemplate.trialParameters: "
            "[{learningRate Learning rate for the training model lr} "
            "{momentum Momentum for the training model lr}]",
        ),
        (
            _template(lambda t: t["trialParameters"][0].update(name="a{b")),
            f'{TEMPLATE}.trialParameters[0]: Invalid value: "": name and reference must be '
            "specified and name must not contain '{' or '}'",
        ),
        (
            _template(lambda t: t["trialParameters"][1].update(reference="nesterov")),
            f'{TEMPLATE}.trialParameters[1].reference: Invalid value: "nesterov": parameter '
            "reference nesterov does not exist in spec.parameters: "
            "[{lr double {0.05 0.01 []  uniform}} {momentum double {0.9 0.5 []  uniform}}]",
        ),
        (
            _template(lambda t: t["trialSpec"].update(metadata={"name": "fixed"})),
            f'{TEMPLATE}: Invalid value: "": metadata.name and metadata.namespace in '
            "spec.trialTemplate must be omitted",
        ),
        (
            _template(lambda t: t["trialSpec"].pop("apiVersion")),
            f"{TEMPLATE}: Required value: APIVersion and Kind in spec.trialTemplate must be "
            "specified",
        ),
        (
            _template(
                lambda t: t.update(
                    trialSpec=None,
                    configMap={
                        "configMapName": "t",
                        "configMapNamespace": "n",
                        "templatePath": "p",
                    },
                )
            ),
            f"{TEMPLATE}.configMap: Forbidden: katib-resume runs inline trial templates only: "
            "give the template as spec.trialTemplate.trialSpec",
        ),
    ],
)
def test_template_rules(change: Callable[[dict[str, Any]], object], message: str) -> None:
    assert message in texts(change)


def test_a_template_without_a_source_gets_no_conditions_and_is_told_both() -> None:
    assert texts(_template(lambda t: t.pop("trialSpec"))) == [
        f"{TEMPLATE}: Required value: successCondition and failureCondition must be specified",
        f"{TEMPLATE}.TrialSource: Required value: spec.trialTemplate.trialSpec or "
        "spec.trialTemplate.configMap must be specified",
    ]


def test_a_skipped_trial_parameter_leaves_its_placeholder_unmatched() -> None:
    found = texts(_template(lambda t: t["trialParameters"][1].update(name="learningRate")))
    assert found[1] == (
        f'{TEMPLATE}: Invalid value: "": parameters: [${{trialParameters.momentum}}] in '
        "spec.trialTemplate not found in spec.trialParameters: "
        "[{learningRate Learning rate for the training model lr} "
        "{learningRate Momentum for the training model momentum}]"
    )


def test_a_placeholder_without_its_trial_parameter_is_named() -> None:
    def change(spec: dict[str, Any]) -> None:
        container = spec["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]["containers"][0]
        container["command"].append("--seed=${trialParameters.seed}")

    assert decided(change) == (
        f'{TEMPLATE}: Invalid value: "": parameters: [${{trialParameters.seed}}] in '
        f"spec.trialTemplate not found in spec.trialParameters: {TRIAL_PARAMETERS}"
    )


def test_a_trial_parameter_without_its_placeholder_stops_the_checks() -> None:
    def change(spec: dict[str, Any]) -> None:
        spec["trialTemplate"]["trialParameters"].insert(0, {"name": "seed", "reference": "lr"})
        spec["trialTemplate"]["trialSpec"]["metadata"] = {"name": "fixed"}  # not reached

    message = decided(change)
    assert message.startswith(
        f'{TEMPLATE}.trialParameters[0].name: Invalid value: "seed": parameter name: seed in '
        'spec.trialParameters not found in spec.trialTemplate: {"apiVersion":"batch/v1",'
    )
    assert "must be omitted" not in message


def test_a_reference_to_the_trials_metadata_needs_no_parameter() -> None:
    def change(spec: dict[str, Any]) -> None:
        spec["trialTemplate"]["trialParameters"].append(
            {"name": "trialName", "reference": "${trialSpec.Name}"}
        )
        container = spec["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]["containers"][0]
        container["command"].append("--name=${trialParameters.trialName}")

    assert decided(change) == ""


def _collector(collector: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def change(spec: dict[str, Any]) -> None:
        spec["metricsCollectorSpec"] = collector

    return change


SOURCE = "spec.metricsCollectorSpec.source"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_collector({"collector": {"kind": "File"}}), ""),
        (_collector({"collector": {"kind": "TensorFlowEvent"}}), ""),
        (_collector({"collector": {"kind": "PrometheusMetric"}}), ""),
        (_collector({"collector": {"kind": "None"}}), ""),
        (
            _collector({"collector": {"kind": "Bogus"}}),
            'spec.metricsCollectorSpec.collector.kind: Invalid value: "Bogus": '
            "invalid metrics collector kind: Bogus",
        ),
        (
            _collector(
                {
                    "collector": {"kind": "File"},
                    "source": {"fileSystemPath": {"kind": "File", "path": "relative.log"}},
                }
            ),
            f"{SOURCE}.fileSystemPath.path: Required value: file path where metrics file exists "
            "is required",
        ),
        (
            _collector(
                {
                    "collector": {"kind": "File"},
                    "source": {
                        "fileSystemPath": {"kind": "File", "path": "/m.json", "format": "JSON"},
                        "filter": {"metricsFormat": ["(a)=(b)"]},
                    },
                }
            ),
            f'{SOURCE}.filter: Invalid value: "": filter must be nil when format of metrics file '
            "is json",
        ),
        (
            _collector(
                {
                    "collector": {"kind": "TensorFlowEvent"},
                    "source": {
                        "fileSystemPath": {"kind": "Directory", "path": "/t", "format": "TEXT"}
                    },
                }
            ),
            f'{SOURCE}.fileSystemPath.format: Invalid value: "TEXT": must be empty',
        ),
        (
            _collector(
                {
                    "collector": {"kind": "PrometheusMetric"},
                    "source": {"httpGet": {"port": -1, "path": "metrics"}},
                }
            ),
            f'[{SOURCE}.httpGet.port: Invalid value: "-1": must be a positive integer value for '
            f"metrics collector kind: PrometheusMetric, {SOURCE}.httpGet.path: Invalid value: "
            '"metrics": path is invalid for metrics collector kind: PrometheusMetric]',
        ),
        (
            _collector({"collector": {"kind": "Custom"}}),
            "spec.metricsCollectorSpec.collector.customCollector: Required value: metrics "
            "collector kind: Custom is required",
        ),
        (
            _collector(
                {"collector": {"kind": "StdOut"}, "source": {"filter": {"metricsFormat": ["(x)"]}}}
            ),
            f'{SOURCE}.filter.metricsFormat: Invalid value: "(x)": two top subexpressions are '
            "required",
        ),
    ],
)
def test_collector_rules(change: Callable[[dict[str, Any]], object], message: str) -> None:
    assert decided(change) == message


def test_an_unparsable_filter_is_named() -> None:
    message = decided(
        _collector(
            {"collector": {"kind": "StdOut"}, "source": {"filter": {"metricsFormat": ["(a"]}}}
        )
    )
    assert message.startswith(
        f'{SOURCE}.filter.metricsFormat: Invalid value: "(a": '
        "invalid filter: error parsing regexp: "
    )


def test_an_empty_algorithm_name_is_required() -> None:
    found = texts(lambda s: s["algorithm"].update(algorithmName=""))
    assert "spec.algorithm.algorithmName: Required value: must be specified" in found
