"""Structured logs: one JSON object per line, with the fields a reconcile attaches.

``logging``'s ``extra`` fields become keys of the line, so a log query can select by Experiment
key, error or lease without parsing sentences.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import ClassVar

_STANDARD = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    fixed: ClassVar[tuple[str, ...]] = ("time", "level", "logger", "msg")

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _STANDARD and name not in line:
                line[name] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure(level: str = "info") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
