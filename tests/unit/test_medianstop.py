"""medianstop: Katib's settings and messages, and a rule that is really the median."""

from __future__ import annotations

import pytest

from katib_resume.adapters.local.suggestion import SettingsError
from katib_resume.adapters.local.suggestion.medianstop import (
    MedianStop,
    read,
    rules,
    running_average,
)
from katib_resume.core.model import AlgorithmSpec


def spec(name: str = "medianstop", **settings: str) -> AlgorithmSpec:
    pairs = [{"name": k, "value": v} for k, v in settings.items()]
    return AlgorithmSpec.model_validate({"algorithmName": name, "algorithmSettings": pairs})


def test_defaults_and_settings() -> None:
    assert read(spec()) == MedianStop(3, 4)
    assert read(spec(min_trials_required="1", start_step="2")) == MedianStop(1, 2)


@pytest.mark.parametrize(
    ("subject", "message"),
    [
        (spec("other"), "unknown algorithm name other"),
        (spec(min_trials_required="0"), "min_trials_required must be greater than zero (>0)"),
        (spec(start_step="0"), "start_step must be greater or equal than one (>=1)"),
        (spec(patience="3"), "unknown setting patience for algorithm medianstop"),
        (
            spec(start_step="two"),
            "failed to validate start_step(two): invalid literal for int() with base 10: 'two'",
        ),
    ],
)
def test_bad_settings_get_katibs_message(subject: AlgorithmSpec, message: str) -> None:
    with pytest.raises(SettingsError) as raised:
        read(subject)
    assert str(raised.value) == message


def test_the_rule_is_the_median_of_the_running_averages() -> None:
    settings = MedianStop(min_trials_required=3, start_step=2)
    averages = {"a": running_average([0.1, 0.3, 9.0], settings) or 0.0, "b": 0.5, "c": 10.0}
    assert averages["a"] == pytest.approx(0.2)
    assert rules(settings, "accuracy", True, averages) == [
        {"name": "accuracy", "value": "0.5", "comparison": "less", "startStep": 2}
    ]  # Katib's mean would say 3.566...
    assert rules(settings, "loss", False, averages)[0]["comparison"] == "greater"
    assert rules(settings, "loss", False, {"a": 1.0, "b": 2.0}) == []
    assert running_average([], settings) is None


def test_validation_checks_the_early_stopping_settings() -> None:
    from katib_resume.adapters.local.suggestion import validate
    from katib_resume.core.model import Experiment

    x = {"name": "x", "parameterType": "double", "feasibleSpace": {"min": "0", "max": "1"}}
    spec = {
        "algorithm": {"algorithmName": "random"},
        "earlyStopping": {
            "algorithmName": "medianstop",
            "algorithmSettings": [{"name": "start_step", "value": "0"}],
        },
        "parameters": [x],
    }
    subject = Experiment.model_validate({"metadata": {"name": "e"}, "spec": spec})
    assert validate(subject).message == "start_step must be greater or equal than one (>=1)"
