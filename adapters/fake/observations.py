"""An in-memory observation log (``core.observation.ObservationLog``) keyed by namespace and
Trial name, with an injectable number of failing reports (Katib's T5 "failed once").

Rows are returned as db-manager returns them: the requested metrics in order, each metric's rows
by time, rows of equal time in insertion order (the stable sort db-manager does not promise).
"""

from __future__ import annotations

from collections.abc import Sequence

from katib_resume.core.observation import MetricRow, TrialKey, parse_timestamp
from katib_resume.core.ports import Unavailable


class FakeObservationLog:
    def __init__(self) -> None:
        self._rows: dict[TrialKey, list[MetricRow]] = {}
        self.failing_reports = 0
        self.calls: list[tuple[str, TrialKey]] = []

    def get(self, key: TrialKey, metrics: Sequence[str]) -> tuple[MetricRow, ...]:
        self.calls.append(("get", key))
        rows = self._rows.get(key, [])
        found: list[MetricRow] = []
        for metric in metrics:
            mine = [row for row in rows if row.name == metric]
            found.extend(sorted(mine, key=lambda row: parse_timestamp(row.time_stamp)))
        return tuple(found)

    def report(self, key: TrialKey, rows: Sequence[MetricRow]) -> None:
        self.calls.append(("report", key))
        if self.failing_reports:
            self.failing_reports -= 1
            raise Unavailable("observation log: report failed")
        self._rows.setdefault(key, []).extend(row for row in rows if row.time_stamp)

    def delete(self, key: TrialKey) -> None:
        self.calls.append(("delete", key))
        self._rows.pop(key, None)
