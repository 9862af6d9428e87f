"""The embedded runtime's observation log: katib-db-manager's table, in SQLite beside the cluster.

Katib's metrics collector reports rows to katib-db-manager and the trial controller reads them
back (``core.observation.ObservationLog``). On one machine the rows live in
``<state dir>/observations.db``, one table keyed by namespace *and* Trial name (Katib's is keyed
by the name alone: same-named Trials of two namespaces mixed their rows), each report committed
in its own transaction, so a command killed after a pod reported keeps the rows for the next
one. Rows come back as db-manager returns them: the metrics in the order asked, each metric's
rows by time, rows of the same time in the order reported.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from katib_resume.core.observation import MetricRow, TrialKey, parse_timestamp

FILE = "observations.db"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS observation_logs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL,
    trial_name TEXT NOT NULL,
    time_stamp TEXT NOT NULL,
    metric_name TEXT NOT NULL,
    value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS observation_logs_trial ON observation_logs (namespace, trial_name);
"""


class SqliteObservationLog:
    """Implements ``core.observation.ObservationLog`` on one SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA busy_timeout = 10000")
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")  # as cluster.db: a killed command loses
        # nothing committed (only a power cut may lose the last transactions)
        self.db.executescript(_SCHEMA)

    def get(self, key: TrialKey, metrics: Sequence[str]) -> tuple[MetricRow, ...]:
        found: list[MetricRow] = []
        for metric in metrics:
            rows = self.db.execute(
                "SELECT time_stamp, value FROM observation_logs WHERE namespace = ? AND "
                "trial_name = ? AND metric_name = ? ORDER BY id",
                (key.namespace, key.name, metric),
            ).fetchall()
            rows.sort(key=lambda row: _ns(row[0]))  # stable: the same time keeps report order
            found.extend(MetricRow(stamp, metric, value) for stamp, value in rows)
        return tuple(found)

    def report(self, key: TrialKey, rows: Sequence[MetricRow]) -> None:
        kept = [row for row in rows if row.time_stamp]
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(
                "INSERT INTO observation_logs (namespace, trial_name, time_stamp, metric_name, "
                "value) VALUES (?, ?, ?, ?, ?)",
                [(key.namespace, key.name, r.time_stamp, r.name, r.value) for r in kept],
            )

    def delete(self, key: TrialKey) -> None:
        with self.db:
            self.db.execute(
                "DELETE FROM observation_logs WHERE namespace = ? AND trial_name = ?",
                (key.namespace, key.name),
            )

    def close(self) -> None:
        self.db.close()


def _ns(stamp: str) -> int:
    """The row's time for ordering; an unreadable one sorts first (the fold reports it)."""
    try:
        return parse_timestamp(stamp)
    except ValueError:
        return -(2**62)
