"""The collector parse's edges (``core/metrics_log.py``): no metrics asked, a JSON timestamp
given as text, and each unreadable log's message in full."""

from __future__ import annotations

import pytest

from katib_resume.core.metrics_log import MetricsLogError, parse_log
from katib_resume.core.observation import MetricRow


def test_no_metrics_asked_reads_nothing() -> None:
    assert parse_log("loss=1\n", ()) == ()
    assert parse_log("{}\n", (), "JSON") == ()


def test_a_json_timestamp_given_as_text_is_kept_as_written() -> None:
    text = (
        '{"loss": "0.5", "timestamp": "2020-01-01T00:00:00Z"}\n{"loss": "0.4", "timestamp": ""}\n'
    )
    assert parse_log(text, ("loss",), "JSON") == (
        MetricRow("2020-01-01T00:00:00Z", "loss", "0.5"),
        MetricRow("0001-01-01T00:00:00Z", "loss", "0.4"),
    )


@pytest.mark.parametrize(
    ("text", "fmt", "filters", "message"),
    [
        ("loss=1\n", "YAML", (), "format must be set TEXT or JSON"),
        ("[1]\n", "JSON", (), "failed to parse the json object: [1]"),
        (
            "[" + "1," * 50 + "1]\n",
            "JSON",
            (),
            "failed to parse the json object: [" + "1," * 39 + "1",
        ),
        (
            "{loss\n",
            "JSON",
            (),
            "failed to parse the json object: "
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (
            "loss=1\n",
            "TEXT",
            ("(",),
            "invalid metrics filter: missing ), unterminated subpattern at position 0",
        ),
    ],
)
def test_an_unreadable_log_says_why_in_full(
    text: str, fmt: str, filters: tuple[str, ...], message: str
) -> None:
    with pytest.raises(MetricsLogError) as error:
        parse_log(text, ("loss",), fmt, filters)
    assert str(error.value) == message
