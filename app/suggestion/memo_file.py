"""The trial memo on the volume, so that a restarted service does not decode every Trial again.

Katib's controller sends every Trial in every call, and the service decodes a Trial only when
its content is new (``trial_memo``). A restarted service (a pod recreated on its volume) has
seen none, so its first call decoded every Trial: about 9 µs each, 50 to 60 ms of CPU in a
new process at 5,000 Trials, where a call costs 7. So what the memo made of each Trial is kept
beside the suggestion state, ``trial-memo`` in the Experiment's directory, and read back by the
first call of a restarted service: a Trial whose content it holds is not decoded.

The file is a cache: it is never the only copy of anything, and whatever is wrong with it
costs time, not results. Each line after the header is checksummed, and the first line that is
not whole and good ends the reading (a crash mid-append leaves a torn last line); a header of
another format, version, reading or objective metric makes the file unread. A file that was not
whole and good is written anew by the first call after the restart. Nothing is synced: a lost
append only means that those Trials are decoded again after a restart. A file that cannot be
written (a full disk, a read-only volume) stops the persisting, with one warning; the calls go
on.

Layout (``FORMAT``, version ``VERSION``)::

    katib-resume/trial-memo 1 <reading> <the objective metric, JSON>\\n
    <xxh3_128 of the body, hex> <body>\\n
    ...

A body is a JSON object of the Trials one call decoded, in columns, an entry a Trial:
``digests`` (the XXH3-128 digest, hex, of the Trial's canonical bytes: ``trial_bytes``), and
what the memo made of it (``Known``): ``items`` (its assignment's canonical text, as a JSON
string), ``started`` (its start time), and its result and succeeded value as
``result_names``/``result_values`` and ``succeeded_names``/``succeeded_values`` (a ``null``
name: none; a ``null`` value: a failed Trial's; a finite value as a JSON number, which reads
back exactly, another by ``repr``, so that NaN and the infinities do too). Columns, so that a
line is read with no Python call per Trial; the assignments as strings, not objects, because a
restart compares them with the saved assignments as texts (``trial_memo.history``), and a
string is a third of an object's parse (0.7 ms at 5,000 Trials, where objects took 2.4).
``reading`` is ``trial_memo.READING``, which changes when the reading of a Trial does. The file
grows by a line a call that decoded a Trial (those new or changed since the last call), and
after ``LINES`` of them is written anew holding the last call's Trials only (atomically: a
temporary file renamed over it).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from collections.abc import Callable
from itertools import repeat
from pathlib import Path
from typing import Any

import orjson
from xxhash import xxh3_128_hexdigest

from katib_resume.app.suggestion.trial_memo import (
    ITEM,
    READING,
    RESULT,
    STARTED,
    SUCCEEDED,
    Entry,
    Known,
    Result,
)

FILE_NAME = "trial-memo"
FORMAT = b"katib-resume/trial-memo"
VERSION = 2
LINES = 64
"""Appended lines after which the file is written anew with the last call's Trials only."""
_log = logging.getLogger(__name__)


class MemoFile:
    """The trial memo of one Experiment read with one objective metric, at ``path``."""

    def __init__(self, path: Path, metric: str | None) -> None:
        self.path, self.metric = path, metric
        self.lines = 0
        """Lines appended since the file was last written whole."""
        self.dirty = True
        """The file is not known whole and good (not read yet, missing, torn, of another
        header): the next save writes it anew."""
        self.broken = False
        """A write failed: nothing more is persisted."""

    def header(self) -> bytes:
        return b" ".join(
            (FORMAT, str(VERSION).encode(), str(READING).encode(), orjson.dumps(self.metric))
        )

    def load(self) -> dict[str, Known]:
        """The Trials the file holds, by digest (a later line's first); ``{}`` if it is
        missing, unreadable or of another header. A file not whole and good (missing, a torn
        or bad line, another header) is written anew by the next ``save``."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return {}
        lines = data.split(b"\n")
        if lines[0] != self.header():
            return {}
        held: dict[str, Known] = {}
        for line in lines[1:-1]:
            entries = _entries(line)
            if entries is None:
                break
            held.update(entries)
        else:  # (the last piece: empty after a whole line, else a torn one)
            self.dirty = lines[-1] != b""
            self.lines = len(lines) - 2
        return held

    def save(self, fresh: list[Entry], whole: Callable[[], list[Entry]]) -> None:
        """Persist a call: a line of ``fresh`` (the Trials it decoded), or the file written
        anew holding ``whole()`` (every Trial of the call) if it has no file yet, ``LINES``
        lines already, or was not whole and good when read (or not read)."""
        if self.broken or not (fresh or self.dirty):
            return
        if self.dirty or self.lines >= LINES:
            return self._rewrite(whole())
        try:
            with self.path.open("ab") as file:
                file.write(_line(fresh))
        except OSError as error:
            return self._failed(error)
        self.lines += 1
        return None

    def discard(self) -> None:
        """The file removed (the next save writes it anew)."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        self.dirty = True

    def _rewrite(self, entries: list[Entry]) -> None:
        """The file written anew (a temporary file renamed over it), holding ``entries``."""
        temporary = self.path.with_name(self.path.name + ".tmp")
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "wb") as file:  # (as private as the state beside it)
                file.write(self.header() + b"\n" + _line(entries))
            os.replace(temporary, self.path)
        except OSError as error:
            with contextlib.suppress(OSError):
                temporary.unlink()
            return self._failed(error)
        self.lines, self.dirty = 1, False
        return None

    def _failed(self, error: OSError) -> None:
        self.broken = True
        _log.warning(
            "the trial memo cannot be written at %s (%s): a restarted service will decode "
            "every Trial again",
            self.path,
            error.strerror or error,
        )


def _line(entries: list[Entry]) -> bytes:
    """A line of ``entries``, in columns (see the module docstring)."""
    digests, known = zip(*entries, strict=True) if entries else ((), ())
    results, succeeded = map(RESULT, known), map(SUCCEEDED, known)
    columns = {"digests": digests, "items": list(map(ITEM, known))}
    columns["started"] = list(map(STARTED, known))
    for key, column in (("result", results), ("succeeded", succeeded)):
        pairs = [(None, None) if pair is None else pair for pair in column]
        columns[f"{key}_names"] = [name for name, _ in pairs]
        columns[f"{key}_values"] = [_written(value) for _, value in pairs]
    body = orjson.dumps(columns)
    return xxh3_128_hexdigest(body).encode() + b" " + body + b"\n"


def _written(value: float | None) -> float | str | None:
    """A value as JSON holds it exactly: a finite one as a number, else its ``repr``."""
    return value if value is None or math.isfinite(value) else repr(value)


def _entries(line: bytes) -> list[Entry] | None:
    """The entries of a line, if it is whole and good; else ``None``. Read a column at a
    time: a Trial costs no Python call of its own."""
    digest, _, body = line.partition(b" ")
    if xxh3_128_hexdigest(body).encode() != digest:
        return None
    try:
        columns = orjson.loads(body)
        digests, items, started = columns["digests"], columns["items"], columns["started"]
        results = _results(columns["result_names"], columns["result_values"])
        succeeded = _results(columns["succeeded_names"], columns["succeeded_values"])
    except (orjson.JSONDecodeError, TypeError, ValueError, KeyError):
        return None
    if not len(digests) == len(items) == len(started) == len(results) == len(succeeded):
        return None
    if not set(map(type, items)) <= {str} or not set(map(type, digests)) <= {str}:
        return None
    if not set(map(type, started)) <= {str, type(None)}:
        return None
    rows = zip(items, started, results, succeeded, strict=True)
    return list(zip(digests, map(tuple.__new__, repeat(Known), rows), strict=True))


def _results(names: list[Any], values: list[Any]) -> list[Result | None]:
    """The results of a line's columns: ``(name, value)``, or ``None`` where the name is."""
    if not set(map(type, names)) <= {str, type(None)} or len(names) != len(values):
        raise TypeError("not results")
    kinds = set(map(type, values))
    if not kinds <= {float, int, str, type(None)}:
        raise TypeError("not values")
    if not kinds <= {float, type(None)}:  # (a float is written as one: only NaN and ±inf not)
        values = [
            value if value is None or value.__class__ is float else float(value) for value in values
        ]
    pairs: list[Result | None] = list(zip(names, values, strict=True))
    at = -1
    with contextlib.suppress(ValueError):  # the Trials without one: few, found at C speed
        while True:
            at = names.index(None, at + 1)
            pairs[at] = None
    return pairs
