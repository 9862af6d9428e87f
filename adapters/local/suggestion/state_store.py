"""The state on the suggestion volume: a snapshot, and a journal of the saves since.

The server saves after every batch, and its state grows with the history (every assignment
issued, and for some searches every result told). Rewriting it whole each time made a run's
total cost quadratic, so a save writes what changed since the last one:

- ``suggestion-state.json``, the *snapshot* (``state.py``): a whole state, written atomically
  (temporary file, ``fsync``, rename, ``fsync`` of the directory) and checksummed;
- ``suggestion-state.journal`` (``journal.py``): the saves since the snapshot, one record each,
  holding the change of the cursor (``cursor_delta.py``) and the batch's new assignments, each
  as canonical JSON, a tab between them (``SEPARATOR``), length-framed and checksummed,
  appended with a write and an ``fsync``. The journal names the
  snapshot it continues by the snapshot's digest.

The restored state is the snapshot with every good record applied in order; given the history
the controller holds, the saved assignments it starts with are taken as its own items, their
bytes compared with its encoding rather than parsed (``unparsed.py``; every byte is still
checksummed). A record torn by a crash mid-append is the journal's last bytes, and is
dropped: that save never completed, as with an atomic rename the state is the old one or the
new one, never a mixture. A damaged
record with others after it, a journal of an unknown version, or a record that does not apply
is a ``StateProblem`` and the server rebuilds from the trial history, as for a bad snapshot.

*Compaction*: a save whose record would make the journal larger than ``GROWTH`` times the
snapshot (or than ``FLOOR`` bytes, for a small snapshot), or hold more than ``RECORDS``
records, writes a new snapshot of the whole state instead, then a new journal of no records
naming it (its header alone, written atomically over the old one), so that the next save
appends, the first one after a restart too: a record and one ``fsync`` rather than a new file,
two ``fsync``s and a rename. A crash in between leaves the old journal beside the new
snapshot: it names the old snapshot, so it is *stale*, ignored, and replaced by the next save.
Should the new snapshot be byte for byte one a stale journal names (the same state as a
snapshot of long ago), the stale journal would read as continuing it: so a journal not known
to name the current snapshot is removed before a snapshot is written (one known to name it
names another digest than the new one).

By size, a compaction comes only once the records since the last one are as large as the
snapshot, and writes at most the snapshot and what they added, so a save costs what changed
(amortized), and a restore reads at most ``GROWTH + 1`` times the state (or the state and
``FLOOR``). By count, because a restore reads the snapshot in one C-level pass but each
record costs it a few microseconds, checked by C-level passes over all of them (``journal.py``:
the lines split, their digests) and, for a cursor of keys changed (an Optuna search's), applied
by a Python call a record (``_replay``): a journal as large as a snapshot of a few thousand
assignments holds thousands of records, which made a restart's cost grow with the history.
``RECORDS`` bounds that part of a restore, at the price of one snapshot written per ``RECORDS``
saves at most (its assignments' encoding reused: ``encoded.py``), a small share of a save until
the state holds hundreds of thousands of assignments.

A save that is not an extension of the last one (the server re-synchronised on the
controller's list) is a compaction too, and so is the first save after reading a snapshot or
a journal of an earlier version (``state.VERSION``, ``journal.VERSION``): the volume is
upgraded by the save, its journal then started anew. A volume without a journal (the layout
of the earlier single-file versions, or a compaction's snapshot written before its journal) is
read as the snapshot alone, and its first save writes the journal with its first record.
"""

from __future__ import annotations

import contextlib
import operator
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import repeat
from operator import methodcaller
from pathlib import Path
from typing import Any

from katib_resume.adapters import heap
from katib_resume.adapters.atomic import write_atomically
from katib_resume.adapters.local.suggestion import cursor_delta, encoded, journal, saved_order
from katib_resume.adapters.local.suggestion import state as snapshot
from katib_resume.adapters.local.suggestion.state import SearchState, StateProblem
from katib_resume.adapters.local.suggestion.unparsed import Unparsed
from katib_resume.core.history import Unreadable
from katib_resume.core.manifest import Manifest

JOURNAL_NAME = "suggestion-state.journal"
SEPARATOR = b"\t"
"""Between a record's cursor change and its assignments: canonical JSON never holds a raw tab."""
GROWTH = 1
"""A save whose record would make the journal larger than this many snapshots compacts."""
FLOOR = 64 * 1024
"""...or than this many bytes, if the snapshot is smaller: a small state's saves append rather
than rewrite the snapshot every other save (a restore reads at most this much more)."""
RECORDS = 256
"""...or a journal of this many records: a restore applies at most this many one by one."""


@dataclass(frozen=True, slots=True)
class _OnDisk:
    """What the volume holds: the state, its snapshot's digest and size, and the journal's
    good bytes continuing it (0: none) with the last record's digest and their number;
    ``current``: the snapshot and the journal are of the versions written (``state.VERSION``,
    ``journal.VERSION``), not earlier ones."""

    state: SearchState
    base: str
    snapshot: int
    journal: int
    last: str
    current: bool = True
    records: int = 0


class StateStore:
    """The state files of one volume, and what they hold (to append the next change to)."""

    def __init__(
        self, path: Path, growth: float = GROWTH, floor: int = FLOOR, records: int = RECORDS
    ) -> None:
        self.path, self.journal_path = path, path.with_name(JOURNAL_NAME)
        self.growth, self.floor, self.records = growth, floor, records
        self._disk: _OnDisk | None = None
        self._journal_file = True  # a journal file may exist (not known until read)
        self._torn = False  # the journal may hold bytes after ``_disk.journal``
        self.version = snapshot.VERSION
        """The version of the snapshot the last ``load`` read (a search's cursor of an earlier
        one is upgraded by the search: ``algorithms.upgraded``)."""
        self.proved: Sequence[Manifest] | None = None
        """The history the last ``load`` proved, by its bytes, to be where the saved
        assignments start (``unparsed.py``), the very sequence (``load_unordered``: as sorted);
        ``None`` if it proved none (the server then compares them: ``prefix.holds``)."""

    def load(self, history: Sequence[Manifest] | None = None) -> SearchState:
        """The saved state (see the module docstring); raises ``StateProblem``. Given the
        ``history`` the controller holds, the saved assignments it starts with are its own
        items, not parsed (``unparsed.py``)."""
        return self._load(history, ordered=True)[0]

    def load_unordered(self, history: Sequence[Manifest]) -> tuple[SearchState, Sequence[Manifest]]:
        """``load`` for a ``history`` in no known order (the Trials of a gRPC request): the
        state, and the history sorted in the saved state's issue order (``saved_order.py``)."""
        state, ordered = self._load(history, ordered=False)
        return state, history if ordered is None else ordered

    def _load(
        self, history: Sequence[Manifest] | None, *, ordered: bool
    ) -> tuple[SearchState, Sequence[Manifest] | None]:
        self._disk, self._journal_file, self._torn, self.proved = None, True, False, None
        head, issued, base, size, version = snapshot.read_parts(self.path)
        self.version = version
        data = self._read_journal()
        try:
            scan = None if data is None else journal.scan(data, base)
        except journal.Damaged as error:
            raise StateProblem("corrupt", str(error)) from None
        cursor, end, last, records = head.cursor, 0, base, 0
        current = version == snapshot.VERSION  # (else the next save compacts: upgraded)
        if scan is not None:
            current = current and scan.version == journal.VERSION
            with heap.paused():  # a parse of every record's change (adapters/heap.py)
                cursor = _replay(cursor, scan.bodies, issued)
            self._torn = data is not None and scan.end < len(data)
            end, last, records = scan.end, scan.last, len(scan.bodies)
        if history is not None and not ordered:
            history = saved_order.in_saved_order(history, issued.body)
        items, proved = _issued(issued, history)
        state = replace(head, cursor=cursor, issued=items)
        self.proved = history if proved else None
        encoded.remember(state.identity(), state.issued, issued.body, issued.marks)
        self._disk = _OnDisk(state, base, size, end, last, current, records)
        return state, history

    def save(self, state: SearchState) -> None:
        """Make ``state`` durable: a record appended, or a new snapshot (a compaction). If it
        fails, the volume still holds the state of the last save that succeeded."""
        disk = self._disk
        record = None if disk is None or not disk.current else _record(disk, state)
        if disk is None or record is None:  # (an earlier version's snapshot: upgraded)
            return self._compact(state)
        line, digest = record
        start = b"" if disk.journal else journal.header(disk.base)
        end = disk.journal + len(start) + len(line)
        if end > self.growth * max(disk.snapshot, self.floor) or disk.records >= self.records:
            return self._compact(state)
        if start:
            write_atomically(self.journal_path, start + line)  # replaces any stale journal
            self._journal_file, self._torn = True, False
        elif not self._append(disk.journal, line):
            return self._compact(state)
        self._disk = replace(disk, state=state, journal=end, last=digest, records=disk.records + 1)
        return None

    def discard(self) -> list[str]:
        """Move the files aside (for a post-mortem) rather than overwrite them; their new
        names. The next save writes a new snapshot."""
        kept = []
        for path in (self.path, self.journal_path):
            aside = path.with_name(path.name + ".discarded")
            with contextlib.suppress(OSError):
                os.replace(path, aside)
                kept.append(aside.name)
        self._disk, self._journal_file = None, True
        return kept

    def _read_journal(self) -> bytes | None:
        try:
            return self.journal_path.read_bytes()
        except FileNotFoundError:
            self._journal_file = False
            return None
        except OSError as error:
            raise StateProblem("corrupt", f"journal unreadable: {error.strerror}") from None

    def _append(self, at: int, line: bytes) -> bool:
        """Write ``line`` at ``at`` and sync it; ``False`` if the journal is gone. A failure
        cuts the journal back to ``at`` (or leaves it marked torn, to be cut first)."""
        try:
            descriptor = os.open(self.journal_path, os.O_WRONLY)
        except FileNotFoundError:
            self._journal_file = False
            return False
        try:
            if self._torn:
                os.ftruncate(descriptor, at)
                self._torn = False
            try:
                _write_at(descriptor, line, at)
                os.fsync(descriptor)
            except BaseException:
                self._torn = True
                with contextlib.suppress(OSError):
                    os.ftruncate(descriptor, at)
                    self._torn = False
                raise
        finally:
            os.close(descriptor)
        return True

    def _compact(self, state: SearchState) -> None:
        """Write ``state`` as the snapshot, then a journal of no records continuing it, so
        that the next save, after a restart too, appends (see the module docstring)."""
        data, digest = snapshot.encode_snapshot(state)
        disk = self._disk
        if disk is None or digest != disk.base:  # (else the snapshot holds these bytes)
            if disk is None or not disk.journal:  # a stale journal could match the new one
                self._remove_journal()
            write_atomically(self.path, data)  # a crash from here on leaves a stale journal
        start = journal.header(digest)
        write_atomically(self.journal_path, start)  # replaces the old journal, now stale
        self._journal_file, self._torn = True, False
        self._disk = _OnDisk(state, digest, len(data), len(start), digest)

    def _remove_journal(self) -> None:
        """Remove the journal file if there may be one."""
        if not self._journal_file:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.journal_path)
        self._journal_file, self._torn = False, False


def _record(disk: _OnDisk, state: SearchState) -> tuple[bytes, str] | None:
    """The journal line that takes the volume from ``disk`` to ``state``, and its digest;
    ``None`` if ``state`` does not extend ``disk``'s (the same search, its assignments first:
    compared in C, each the same object as a rule)."""
    old = disk.state
    count = len(old.issued)
    if state.identity() != old.identity() or state.issued[:count] != old.issued:
        return None
    change = snapshot.canonical(cursor_delta.diff(old.cursor, state.cursor))
    body = change + SEPARATOR + snapshot.canonical(list(state.issued[count:]))
    return journal.frame(body, disk.last)


def _replay(cursor: Any, bodies: list[bytes], issued: Unparsed) -> Any:
    """``cursor`` with the records' changes applied in order (changed in place), their
    assignments added to ``issued``, unparsed.

    A cursor that is one value (``random``, ``grid``, ``hyperband``: an integer) changes by
    being written whole (``{"value": X}``), and then the cursor after every record is the last
    one's, their assignments added in one C-level pass (``Unparsed.extend_all``): a restart
    reads up to ``RECORDS`` records, each applied by a Python call otherwise. Anything else,
    or a record that does not apply, goes record by record (which names the record)."""
    parts = list(map(_SPLIT, bodies))
    if set(map(len, parts)) - {2}:
        raise StateProblem("corrupt", "a journal record is not a change and assignments")
    changes = _parsed([change for change, _ in parts])
    if _whole_values(changes) and issued.extend_all([batch for _, batch in parts]):
        try:
            return cursor_delta.apply(cursor, changes[-1]) if changes else cursor
        except ValueError:
            raise StateProblem("corrupt", f"journal record {len(changes)} does not apply") from None
    for number, (change, (_, batch)) in enumerate(zip(changes, parts, strict=True), 1):
        try:
            cursor = cursor_delta.apply(cursor, change)
            issued.extend(batch)
        except ValueError:
            raise StateProblem("corrupt", f"journal record {number} does not apply") from None
    return cursor


def _whole_values(changes: list[Any]) -> bool:
    """Whether every change writes the cursor whole (``{"value": X}``, which ``apply`` takes
    alone), checked in C-level passes."""
    if not set(map(type, changes)) <= {dict}:
        return False
    return all(map(operator.contains, changes, repeat("value")))


_SPLIT = methodcaller("split", SEPARATOR)


def _issued(
    issued: Unparsed, history: Sequence[Manifest] | None
) -> tuple[tuple[Manifest, ...], bool]:
    """The saved assignments, parsed, or resolved against ``history`` (``unparsed.py``), and
    whether their bytes proved ``history`` to be where they start."""
    with heap.paused():  # a parse of the assignments not in the history (adapters/heap.py)
        try:
            return (issued.parse(), False) if history is None else issued.resolved(history)
        except Unreadable:  # the history's own store is damaged (``core.history``), not ours
            raise
        except ValueError as error:
            raise StateProblem("corrupt", str(error)) from None


def _parsed(texts: list[bytes]) -> list[Any]:
    """The JSON values ``texts`` (the cursor's changes), read by one call over all of them
    (``state.exact_loads``: a cursor may hold integers beyond 64 bits, read exactly)."""
    try:
        values = snapshot.exact_loads(b"[" + b",".join(texts) + b"]")
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise StateProblem("corrupt", "a journal record is not JSON") from None
    if not isinstance(values, list) or len(values) != len(texts):
        raise StateProblem("corrupt", "a journal record is not one JSON value")
    return values


def _write_at(descriptor: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(descriptor, view, offset)
        view, offset = view[written:], offset + written


def load(path: Path, history: Sequence[Manifest] | None = None) -> SearchState:
    """The state saved at ``path`` (snapshot and journal)."""
    return StateStore(path).load(history)
