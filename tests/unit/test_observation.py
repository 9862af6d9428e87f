"""Observation-log rows to ``status.observation`` (docs/katib-contract.md#observations;
trial_controller_test T7, T8)."""

from __future__ import annotations

import pytest

from katib_resume.adapters.fake.observations import FakeObservationLog
from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.observation import (
    Metric,
    MetricRow,
    ObservationError,
    TrialKey,
    is_available,
    observe,
    parse_timestamp,
    strategies,
)


def _rows(metric: str, *pairs: tuple[str, str]) -> list[MetricRow]:
    return [MetricRow(time, metric, value) for value, time in pairs]


def test_t7_min_max_and_latest_with_ties_to_the_later_row() -> None:
    day, before = "2020-04-13T14:47:", "2020-04-12T14:47:42Z"
    rows = [
        *_rows(
            "error",
            ("0.03", day + "38Z"),
            ("0.02", day + "39Z"),
            ("0.01", day + "40Z"),
            ("0.05", day + "41Z"),
            ("0.06", day + "41Z"),
            ("0.07", day + "41Z"),
            ("0.1", before),
        ),
        *_rows(
            "accuracy",
            ("0.7", day + "38Z"),
            ("0.71", day + "39Z"),
            ("0.72", day + "40Z"),
            ("0.68", day + "41Z"),
            ("0.69", day + "41Z"),
            ("0.67", day + "41Z"),
            ("0.6", before),
        ),
    ]
    assert observe(["error", "accuracy"], rows) == (
        Metric("error", min="0.01", max="0.1", latest="0.07"),
        Metric("accuracy", min="0.6", max="0.72", latest="0.67"),
    )


def test_t8_an_unknown_metric_is_ignored_and_a_zoneless_time_fails() -> None:
    rows = [
        MetricRow("2020-08-10T14:47:38+08:00", "not-accuracy", "1.15"),
        MetricRow("2020-08-10T14:47:42", "accuracy", "0.77"),
    ]
    with pytest.raises(ObservationError, match="failed to parse timestamps"):
        observe(["accuracy"], rows)
    assert observe(["accuracy"], rows[:1]) == (Metric("accuracy"),)


def test_non_numeric_values_move_latest_only() -> None:
    rows = _rows(
        "accuracy", ("0.5", "2020-01-01T00:00:00Z"), ("unavailable", "2020-01-01T00:00:01Z")
    )
    metric = observe(["accuracy"], rows)[0]
    assert (metric.min, metric.max, metric.latest) == ("0.5", "0.5", "unavailable")
    assert not is_available([metric], "accuracy")
    assert not is_available([Metric("accuracy", latest="")], "accuracy"), "Katib's #2724"


def test_timestamps_are_normalised_to_utc_and_the_zero_time_compares() -> None:
    assert parse_timestamp("2020-08-10T14:47:38+08:00") == parse_timestamp("2020-08-10T06:47:38Z")
    assert parse_timestamp("0001-01-01T00:00:00Z") < parse_timestamp("1970-01-01T00:00:00Z") == 0
    assert parse_timestamp("1970-01-01T00:00:00.000000001Z") == 1


def test_strategies_default_metrics_the_objective_names_but_does_not_list() -> None:
    objective = ObjectiveSpec(
        type="minimize",
        objective_metric_name="loss",
        additional_metric_names=("accuracy",),
        metric_strategies=({"name": "accuracy", "value": "max"},),
    )
    assert strategies(objective) == (("accuracy", "max"), ("loss", "min"))


def test_rows_are_kept_by_namespace_and_trial_name() -> None:
    """Katib keys ``observation_logs`` by Trial name alone (docs/katib-contract.md#db-manager,
    #2578)."""
    log = FakeObservationLog()
    a, b = TrialKey("team-a", "trial"), TrialKey("team-b", "trial")
    log.report(a, [MetricRow("2020-01-01T00:00:00Z", "accuracy", "0.1")])
    log.report(b, [MetricRow("2020-01-01T00:00:00Z", "accuracy", "0.9")])
    log.delete(a)
    assert log.get(a, ["accuracy"]) == ()
    assert [row.value for row in log.get(b, ["accuracy"])] == ["0.9"]
