"""Katib's file metrics collector's parse (TEXT and JSON), and the embedded observation log."""

from __future__ import annotations

from pathlib import Path

import pytest

from katib_resume.adapters.local.observations import SqliteObservationLog
from katib_resume.core.metrics_log import MetricsLogError, parse_log
from katib_resume.core.observation import MetricRow, TrialKey

ZERO = "0001-01-01T00:00:00Z"


def rows(*triples: tuple[str, str, str]) -> tuple[MetricRow, ...]:
    return tuple(MetricRow(*triple) for triple in triples)


def test_text_with_the_default_filter_reads_every_pair_of_the_lines_naming_a_metric() -> None:
    text = "epoch 1\nloss=0.5 accuracy = 0.7\nloss=0.25, other=3\nno metric here=1\n"
    assert parse_log(text, ("loss", "accuracy")) == rows(
        (ZERO, "loss", "0.5"), (ZERO, "accuracy", "0.7"), (ZERO, "loss", "0.25")
    )


def test_a_leading_rfc3339_time_is_the_rows_timestamp() -> None:
    text = "2026-01-01T00:00:05.5Z loss=0.5\n2026-01-01 loss=0.4\n"
    assert parse_log(text, ("loss",)) == rows(
        ("2026-01-01T00:00:05.5Z", "loss", "0.5"), (ZERO, "loss", "0.4")
    )


def test_the_value_is_not_checked_as_katib_does_not() -> None:
    assert parse_log("loss=nan\n", ("loss",)) == rows((ZERO, "loss", ""))


def test_without_the_objective_only_an_unavailable_row_is_reported() -> None:
    assert parse_log("accuracy=0.9\n", ("loss", "accuracy")) == rows((ZERO, "loss", "unavailable"))


def test_metrics_format_filters_replace_the_default() -> None:
    text = "loss: 0.3 | loss=0.9\n"
    assert parse_log(text, ("loss",), filters=(r"(\w+):\s*([\d.]+)",)) == rows(
        (ZERO, "loss", "0.3")
    )


def test_json_lines_report_string_values_with_katibs_timestamps() -> None:
    text = '{"loss": "0.5", "timestamp": 1638422847.28721}\n\n{"loss": 0.4}\n{"loss": "0.3"}\n'
    assert parse_log(text, ("loss",), "JSON") == rows(
        ("2021-12-02T05:27:27.000028721Z", "loss", "0.5"), (ZERO, "loss", "0.3")
    )


@pytest.mark.parametrize(
    ("stamp", "expected"),
    [
        ("1.5e-05", "1970-01-01T00:00:00.000000015Z"),  # Go writes 0.000015: never an exponent
        ("1e+10", "2286-11-20T17:46:40Z"),
        ("1e+16", ZERO),  # past the calendar (year 9999): the zero time
        ("12", "1970-01-01T00:00:12Z"),
        ("1.1234567891", "1970-01-01T00:00:02.234567891Z"),  # past a second carries, as Go's
        ("1" + "0" * 400, ZERO),  # beyond a float: the zero time, not a traceback
        ("true", ZERO),
        ("NaN", ZERO),  # Python's json reads it; no time
        ("-Infinity", ZERO),
    ],
)
def test_a_json_number_timestamp_is_read_from_its_positional_digits(
    stamp: str, expected: str
) -> None:
    text = f'{{"loss": "0.5", "timestamp": {stamp}}}\n'
    assert parse_log(text, ("loss",), "JSON") == rows((expected, "loss", "0.5"))


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        ("not json\n", "JSON", "failed to parse the json object"),
        ("[1]\n", "JSON", "failed to parse the json object"),
        ("loss=1\n", "YAML", "format must be set TEXT or JSON"),
    ],
)
def test_an_unreadable_log_is_an_error(text: str, fmt: str, message: str) -> None:
    with pytest.raises(MetricsLogError, match=message):
        parse_log(text, ("loss",), fmt)


def test_the_observation_log_keys_rows_by_namespace_and_name_and_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "observations.db"
    log = SqliteObservationLog(path)
    a, b = TrialKey("team-a", "t"), TrialKey("team-b", "t")
    log.report(a, rows(("2026-01-01T00:00:02Z", "loss", "0.2"), (ZERO, "loss", "0.9")))
    log.report(b, rows((ZERO, "loss", "0.7")))
    log.close()
    reopened = SqliteObservationLog(path)
    assert reopened.get(a, ("loss",)) == rows(
        (ZERO, "loss", "0.9"), ("2026-01-01T00:00:02Z", "loss", "0.2")
    )  # by time
    reopened.delete(a)
    assert reopened.get(a, ("loss",)) == ()
    assert reopened.get(b, ("loss",)) == rows((ZERO, "loss", "0.7"))
    reopened.close()
