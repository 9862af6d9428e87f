r"""Katib's file metrics collector's parse: a metrics log (TEXT or JSON) to observation-log rows
(docs/katib-contract.md#observations).

The StdOut and File collectors read the same way: StdOut's log is the primary container's
output (stdout and stderr), File's is the file at ``source.fileSystemPath.path``.

TEXT: a line is read only when it contains one of the metric names (as a substring); its
timestamp is the text before its first space when that is an RFC 3339 time, else the zero time;
every match of each filter (``source.filter.metricsFormat``, else Katib's default
``([\w|-]+)\s*=\s*([+-]?\d*(\.\d+)?([Ee][+-]?\d+)?)``) gives its first two groups, trimmed, as a
name and a value, kept when the name is one of the metrics. The value is not checked: with the
default filter ``loss=nan`` gives ``""``, as in Katib.

JSON: each non-empty line is an object (else ``MetricsLogError``); its ``timestamp`` is used as
written when a string, read as seconds since 1970 when a number (with Katib's quirk: the digits
after the point are taken as nanoseconds), else the zero time; a metric is reported only when
its key holds a string.

Either way, when no row has the objective's name (the first metric), the result is one row,
``{zero time, objective, "unavailable"}``: the other metrics are dropped, as Katib drops them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from katib_resume.core.katib_trial import UNAVAILABLE, ZERO_TIME
from katib_resume.core.observation import MetricRow, ObservationError, parse_timestamp

DEFAULT_FILTER = r"([\w|-]+)\s*=\s*([+-]?\d*(\.\d+)?([Ee][+-]?\d+)?)"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class MetricsLogError(ValueError):
    """The log cannot be read in its format (Katib's collector exits on it)."""


def parse_log(
    text: str, metrics: Sequence[str], fmt: str = "TEXT", filters: Sequence[str] = ()
) -> tuple[MetricRow, ...]:
    """The rows of ``metrics`` (the objective first) that the collector reports for ``text``."""
    if not metrics:
        return ()
    if fmt == "TEXT":
        rows = _text(text, metrics, filters or (DEFAULT_FILTER,))
    elif fmt == "JSON":
        rows = _json(text, metrics)
    else:
        raise MetricsLogError("format must be set TEXT or JSON")
    if not any(row.name == metrics[0] for row in rows):
        return (MetricRow(ZERO_TIME, metrics[0], UNAVAILABLE),)
    return tuple(rows)


def _text(text: str, metrics: Sequence[str], filters: Sequence[str]) -> list[MetricRow]:
    try:
        patterns = [re.compile(f) for f in filters]
    except re.error as error:
        raise MetricsLogError(f"invalid metrics filter: {error}") from None
    wanted, rows = set(metrics), []
    for line in text.split("\n"):
        if not any(name in line for name in metrics):
            continue
        stamp = _stamp(line.split(" ", 1)[0])
        for pattern in patterns:
            for match in pattern.finditer(line):
                if len(match.groups()) < 2:
                    continue
                name, value = ((match.group(i) or "").strip() for i in (1, 2))
                if name in wanted:
                    rows.append(MetricRow(stamp, name, value))
    return rows


def _stamp(text: str) -> str:
    try:
        parse_timestamp(text)
    except ObservationError:
        return ZERO_TIME
    return text


def _json(text: str, metrics: Sequence[str]) -> list[MetricRow]:
    rows: list[MetricRow] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as error:
            raise MetricsLogError(f"failed to parse the json object: {error}") from None
        if not isinstance(entry, dict):
            raise MetricsLogError(f"failed to parse the json object: {line[:80]}")
        stamp = _json_stamp(entry.get("timestamp"))
        rows.extend(
            MetricRow(stamp, name, entry[name])
            for name in metrics
            if isinstance(entry.get(name), str)
        )
    return rows


def _positional(number: float) -> str:
    """The shortest digits that read back as ``number``, without an exponent, as Go's
    ``strconv.FormatFloat(v, 'f', -1, 64)`` writes them (``1.5e-05`` is ``0.000015``): the
    quirk reads the digits after the point, so an exponent must never reach it (``NaN`` and
    ``Infinity`` come out as words, which then read as no time)."""
    return format(Decimal(repr(number)), "f")


def _json_stamp(value: object) -> str:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ZERO_TIME
    try:
        whole, _, fraction = _positional(float(value)).partition(".")
        carry, nanos = divmod(int(fraction or "0"), 10**9)  # Katib's quirk: "28721" is 28721 ns
        moment = _EPOCH + timedelta(seconds=int(whole) + carry)
    except (ValueError, OverflowError):
        return ZERO_TIME
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{nanos:09d}".rstrip("0").rstrip(".") + "Z"
