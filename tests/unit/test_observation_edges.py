"""The edges of the observation fold (docs/katib-contract.md#observations): the default
strategies, equal values at ``min``/``max``, timestamps with zones and fractions, the exact
"failed to parse timestamps" texts, and a stored ``status.observation`` read back."""

from __future__ import annotations

import dataclasses

import pytest

from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.observation import (
    Metric,
    MetricRow,
    ObservationError,
    TrialKey,
    from_status,
    metric_names,
    observe,
    parse_timestamp,
    strategies,
)

T0 = "2020-01-01T00:00:0"


def test_no_objective_has_no_strategies_and_no_metrics() -> None:
    assert strategies(None) == ()
    assert metric_names(None) == ()
    nameless = ObjectiveSpec(type="maximize", additional_metric_names=("accuracy",))
    assert metric_names(nameless) == ()
    assert strategies(nameless) == ()


@pytest.mark.parametrize(
    ("kind", "strategy"), [("minimize", "min"), ("maximize", "max"), (None, "latest")]
)
def test_the_webhooks_default_strategy_follows_the_objective_type(
    kind: str | None, strategy: str
) -> None:
    objective = ObjectiveSpec(type=kind, objective_metric_name="loss")
    assert strategies(objective) == (("loss", strategy),)


def test_a_metric_named_twice_gets_one_default_entry_and_a_valueless_strategy_stays_empty() -> None:
    objective = ObjectiveSpec(
        type="maximize",
        objective_metric_name="accuracy",
        additional_metric_names=("loss", "accuracy", "loss"),
        metric_strategies=({"name": "recall"}, {"value": "min"}),
    )
    assert strategies(objective) == (("recall", ""), ("accuracy", "max"), ("loss", "max"))


def test_an_equal_value_keeps_the_first_spelling_of_min_and_max() -> None:
    """Katib compares strictly: a value equal to ``min`` or ``max`` moves neither."""
    rows = [
        MetricRow(T0 + "1Z", "loss", "1"),
        MetricRow(T0 + "2Z", "loss", "3"),
        MetricRow(T0 + "3Z", "loss", "1.0"),
        MetricRow(T0 + "4Z", "loss", "3.0"),
    ]
    assert observe(["loss"], rows) == (Metric("loss", min="1", max="3", latest="3.0"),)


def test_timestamps_count_days_zones_and_nanoseconds() -> None:
    day = 86_400 * 1_000_000_000
    assert parse_timestamp("1970-01-02T00:00:00Z") == day
    assert parse_timestamp("1970-01-01T00:00:01.5Z") == 1_500_000_000
    assert parse_timestamp("1970-01-01T00:00:00Z") == 0
    assert parse_timestamp("1970-01-01T00:00:00-05:00") == 5 * 3_600 * 1_000_000_000
    assert parse_timestamp("1970-01-01T12:45:00+12:45") == 0
    assert parse_timestamp("1970-01-01T00:00:00+00:30") == -30 * 60 * 1_000_000_000


def test_an_unreadable_timestamp_is_told_in_katibs_words() -> None:
    with pytest.raises(ObservationError) as zoneless:
        parse_timestamp("2020-08-10T14:47:42")
    assert str(zoneless.value) == (
        "failed to parse timestamps '2020-08-10T14:47:42': not RFC 3339 with a zone"
    )
    with pytest.raises(ObservationError) as impossible:
        parse_timestamp("2020-02-30T00:00:00Z")
    assert str(impossible.value) == (
        "failed to parse timestamps '2020-02-30T00:00:00Z': day is out of range for month"
    )


def test_a_stored_observation_reads_back_with_unavailable_for_what_it_lacks() -> None:
    raw = {
        "metrics": [
            {"name": "loss", "min": "0.1", "max": "0.9", "latest": "0.5"},
            {"min": "1"},
            "not a metric",
        ]
    }
    assert from_status(raw) == (
        Metric("loss", "0.1", "0.9", "0.5"),
        Metric("", "1", "unavailable", "unavailable"),
    )
    assert from_status(None) is None
    assert from_status({"metrics": "none"}) is None
    assert from_status({}) is None


def test_keys_and_rows_are_values() -> None:
    """Trial keys are printed, sorted and used as dict keys; rows and metrics are shared
    between the fold and the log adapters, so none of them can change."""
    keys = [TrialKey("b", "t"), TrialKey("a", "z"), TrialKey("a", "t")]
    assert [str(k) for k in sorted(keys)] == ["a/t", "a/z", "b/t"]
    row, metric = MetricRow(T0 + "1Z", "loss", "1"), Metric("loss")
    assert len({row, row, metric, metric}) == 2
    for value, field in ((row, "value"), (metric, "latest")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field, "2")
