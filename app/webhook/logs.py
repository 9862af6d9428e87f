"""Structured logs: one JSON object per line on stderr, so a cluster's log pipeline can parse them.

Every line carries ``time`` (UTC, RFC 3339), ``level`` and ``event`` (a short fixed name such as
``admission`` or ``certificate-reload-failed``); the other fields depend on the event. One
``write`` per line under a lock, so lines from the server's threads never interleave.
"""

from __future__ import annotations

import sys
import threading
from datetime import UTC, datetime
from typing import Literal, TextIO

from katib_resume.app.common.logs import json_line

Level = Literal["debug", "info", "warning", "error"]


class JsonLog:
    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def info(self, event: str, **fields: object) -> None:
        self.write("info", event, fields)

    def warning(self, event: str, **fields: object) -> None:
        self.write("warning", event, fields)

    def error(self, event: str, **fields: object) -> None:
        self.write("error", event, fields)

    def write(self, level: Level, event: str, fields: dict[str, object]) -> None:
        now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        line = json_line(now, level, {"event": event, **fields}) + "\n"
        stream = self._stream or sys.stderr  # looked up late: tests capture sys.stderr
        with self._lock:
            try:
                stream.write(line)
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed or broken log stream must never take a request down
