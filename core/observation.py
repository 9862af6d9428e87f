"""From observation-log rows to a Trial's ``status.observation``
(docs/katib-contract.md#observations).

Katib keeps one entry per metric strategy, starting at ``unavailable``, and folds the rows in the
order the log returns them (the objective's rows first, each group by time): a value that parses
as a number widens ``min``/``max``; every row whose timestamp is not earlier than the kept one
becomes ``latest`` (ties go to the later row, so equal zero-time StdOut rows end with the last
line). Rows of metrics without a strategy are ignored before their timestamp is read; a timestamp
that is not RFC 3339 fails the whole fold (Katib's "failed to parse timestamps").

Two choices of ours: a metric named by the objective but missing from ``metricStrategies`` (a
Trial made by hand, without Katib's defaulting webhook) gets the webhook's default strategy
instead of no entry; and ``NaN`` never becomes ``min`` or ``max`` (in Go it would stick there,
since nothing compares with it).

The log itself is reached through ``ObservationLog``, keyed by namespace *and* Trial name: Katib's
table is keyed by name alone, so same-named Trials in two namespaces read and delete each other's
rows (docs/katib-contract.md#db-manager, docs/katib-contract.md#trial-bugs #2578).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Protocol

from katib_resume.core.katib_trial import UNAVAILABLE
from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.objective import parse_metric


class ObservationError(ValueError):
    """A row the fold cannot read (its timestamp)."""


@dataclass(frozen=True, slots=True, order=True)
class TrialKey:
    """Which Trial's rows: never the name alone."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One observation-log row, as db-manager stores it."""

    time_stamp: str
    name: str
    value: str


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    min: str = UNAVAILABLE
    max: str = UNAVAILABLE
    latest: str = UNAVAILABLE

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "min": self.min, "max": self.max, "latest": self.latest}


class ObservationLog(Protocol):
    """The observation log (Katib's db-manager, or the embedded runtime's own)."""

    def get(self, key: TrialKey, metrics: Sequence[str]) -> tuple[MetricRow, ...]:
        """The rows of ``metrics`` for ``key``, the first metric's rows first, each by time."""
        ...

    def report(self, key: TrialKey, rows: Sequence[MetricRow]) -> None: ...

    def delete(self, key: TrialKey) -> None: ...


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})",
    re.ASCII,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_timestamp(text: str) -> int:
    """Nanoseconds since 1970 (negative before) of an RFC 3339 time with a zone, normalised to
    UTC; the zero time ``0001-01-01T00:00:00Z`` is an ordinary, comparable value."""
    found = _RFC3339.fullmatch(text)
    if found is None:
        raise ObservationError(f"failed to parse timestamps {text!r}: not RFC 3339 with a zone")
    year, month, day, hour, minute, second = (int(part) for part in found.groups()[:6])
    fraction, zone = found.group(7) or "", found.group(8)
    offset = timedelta(0)
    if zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        offset = sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=timezone(offset))
    except ValueError as error:
        raise ObservationError(f"failed to parse timestamps {text!r}: {error}") from None
    delta = moment - _EPOCH
    seconds = delta.days * 86_400 + delta.seconds
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0") or 0)


_DEFAULTS = {"minimize": "min", "maximize": "max"}


def strategies(objective: ObjectiveSpec | None) -> tuple[tuple[str, str], ...]:
    """``(metric, strategy)`` in ``metricStrategies`` order, then the objective's metrics that
    it does not name, with the defaulting webhook's strategy."""
    if objective is None:
        return ()
    named = [
        (str(entry["name"]), str(entry.get("value") or ""))
        for entry in objective.metric_strategies
        if entry.get("name")
    ]
    default = _DEFAULTS.get(objective.type or "", "latest")
    known = {name for name, _ in named}
    for metric in metric_names(objective):
        if metric not in known:
            named.append((metric, default))
            known.add(metric)
    return tuple(named)


def metric_names(objective: ObjectiveSpec | None) -> tuple[str, ...]:
    """The metrics to fetch, the objective first (Katib's order)."""
    if objective is None or not objective.objective_metric_name:
        return ()
    return (objective.objective_metric_name, *objective.additional_metric_names)


def observe(names: Iterable[str], rows: Iterable[MetricRow]) -> tuple[Metric, ...]:
    """The observation of ``names`` (in that order) folded from ``rows`` by Katib's rules."""
    entries = {name: Metric(name) for name in names}
    kept: dict[str, int] = {}
    for row in rows:
        entry = entries.get(row.name)
        if entry is None:
            continue
        entry = _widen(entry, row.value)
        moment = parse_timestamp(row.time_stamp)
        if row.name not in kept or kept[row.name] <= moment:
            kept[row.name] = moment
            entry = Metric(entry.name, entry.min, entry.max, row.value)
        entries[row.name] = entry
    return tuple(entries.values())


def _widen(entry: Metric, value: str) -> Metric:
    number = parse_metric(value)
    if number is None:  # parse_metric reads NaN as no number
        return entry
    if entry.min == UNAVAILABLE:
        return Metric(entry.name, value, value, entry.latest)
    if number < float(entry.min):
        return Metric(entry.name, value, entry.max, entry.latest)
    if entry.max == UNAVAILABLE or number > float(entry.max):
        return Metric(entry.name, entry.min, value, entry.latest)
    return entry


def is_available(metrics: Iterable[Metric], objective: str | None) -> bool:
    """Katib's ``IsObservationAvailable``: the objective's ``latest`` is not ``unavailable``,
    nor empty. Katib counts an empty value as available (PR #2724): what the default filter
    reads from ``loss=nan``, which then makes a Trial Succeeded with no objective, can become the
    Experiment's optimal Trial and fails later suggestion calls; here such a Trial is
    ``MetricsUnavailable``."""
    return any(m.name == objective and m.latest not in (UNAVAILABLE, "") for m in metrics)


def from_status(raw: object) -> tuple[Metric, ...] | None:
    """A stored ``status.observation`` back as metrics (None when there is none)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("metrics"), list):
        return None
    return tuple(
        Metric(
            str(m.get("name", "")), *(str(m.get(k, UNAVAILABLE)) for k in ("min", "max", "latest"))
        )
        for m in raw["metrics"]
        if isinstance(m, dict)
    )
