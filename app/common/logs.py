"""Structured logs: one JSON object per line, with the fields a reconcile attaches.

``logging``'s ``extra`` fields become keys of the line, so a log query can select by Experiment
key, error or lease without parsing sentences. ``json_line`` is the one encoder of both binaries'
lines (the webhook's ``app.webhook.logs`` uses it with its own keys).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import ClassVar

_STANDARD = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


def json_line(time: str, level: str, fields: Mapping[str, object]) -> str:
    """One log line (no newline): ``time`` and ``level`` first, then ``fields``. A value JSON
    cannot hold is written as its ``str``; the output is ASCII, so a lone surrogate still logs."""
    return json.dumps({"time": time, "level": level, **fields}, default=str)


class JsonFormatter(logging.Formatter):
    fixed: ClassVar[tuple[str, ...]] = ("time", "level", "logger", "msg")

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, object] = {"logger": record.name, "msg": record.getMessage()}
        for name, value in vars(record).items():
            if name not in _STANDARD and name not in self.fixed:
                fields[name] = value
        if record.exc_info:
            fields["exception"] = self.formatException(record.exc_info)
        time = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        return json_line(time, record.levelname.lower(), fields)


def configure(level: str = "info") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
