"""Structured logs of both binaries: one JSON object per line, written by the standard library.

The controller and the webhook both log through ``logging``, and every line is formatted by
``JsonFormatter``: ``time`` (UTC, RFC 3339 with milliseconds), ``level``, ``logger``, ``msg``, then
the record's own fields, so a log query can select by Experiment key, uid or event without
parsing sentences. ``configure`` installs it on the root logger (one ``StreamHandler`` on
stderr: one write per line under the handler's lock, so lines from threads never interleave).

The controller logs with ``logging`` directly (``extra`` fields become keys). The webhook logs
*events* through ``JsonLog``: a short fixed name (``admission``, ``certificate-reload-failed``),
written as ``event`` (and as ``msg``), and fields of any name; they travel as one ``fields``
mapping because ``LogRecord`` reserves names such as ``name`` and ``message``.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import ClassVar, Literal, TextIO

_STANDARD = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}
WEBHOOK_LOGGER = "katib_resume.webhook"
Level = Literal["debug", "info", "warning", "error"]


def json_line(time: str, level: str, fields: Mapping[str, object]) -> str:
    """One log line (no newline): ``time`` and ``level`` first, then ``fields``. A value JSON
    cannot hold is written as its ``str``; the output is ASCII, so a lone surrogate still logs."""
    return json.dumps({"time": time, "level": level, **fields}, default=str)


class JsonFormatter(logging.Formatter):
    fixed: ClassVar[tuple[str, ...]] = ("time", "level", "logger", "msg", "fields")

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, object] = {"logger": record.name, "msg": record.getMessage()}
        for name, value in vars(record).items():
            if name not in _STANDARD and name not in self.fixed:
                fields[name] = value
        extra = getattr(record, "fields", None)
        if isinstance(extra, Mapping):
            fields.update(extra)
        if record.exc_info:
            fields["exception"] = self.formatException(record.exc_info)
        when = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        return json_line(when.replace("+00:00", "Z"), record.levelname.lower(), fields)


def handler(stream: TextIO | None = None) -> logging.Handler:
    """A handler writing JSON lines to ``stream`` (stderr by default)."""
    out = logging.StreamHandler(stream or sys.stderr)
    out.setFormatter(JsonFormatter())
    return out


def configure(level: str = "info") -> None:
    """JSON lines on stderr for every logger of the process, at ``level`` and above."""
    root = logging.getLogger()
    root.handlers[:] = [handler()]
    root.setLevel(level.upper())


class JsonLog:
    """The webhook's event log: ``log.info("admission", uid=..., allowed=True)``.

    Without a stream it writes to the ``katib_resume.webhook`` logger (``configure`` sends that
    to stderr); with one (tests read their own) it writes there alone, in the same format.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        if stream is None:
            self._logger = logging.getLogger(WEBHOOK_LOGGER)
            return
        self._logger = logging.Logger(WEBHOOK_LOGGER)  # unregistered: this stream only
        self._logger.addHandler(handler(stream))
        self._logger.propagate = False

    def info(self, event: str, **fields: object) -> None:
        self.write("info", event, fields)

    def warning(self, event: str, **fields: object) -> None:
        self.write("warning", event, fields)

    def error(self, event: str, **fields: object) -> None:
        self.write("error", event, fields)

    def write(self, level: Level, event: str, fields: Mapping[str, object]) -> None:
        number = logging.getLevelNamesMapping()[level.upper()]
        self._logger.log(number, event, extra={"event": event, "fields": fields})
