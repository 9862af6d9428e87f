"""The fake cluster on SQLite: every change committed when it happens, as kine keeps k3s's.

The in-memory ``Store`` stays the working set (reads never touch the disk); a ``Journal`` is its
durable copy, written through on every change in a transaction of its own, so a process killed
at any moment leaves the cluster as of its last completed write. The layout is kine's:

- ``log``: one row per revision (``resourceVersion``), the object as it was after the change
  (for a deletion, its last state): the watch, ordered by revision;
- ``objects``: one row per live object, pointing at the revision that holds its current state,
  with the revision that created it (kine's ``create_revision``: the objects' order);
- ``state``: the counters (version, UIDs), the key and revision of the change before the last
  (the lagging cache's ``undo``) and the world's own state (clock, ticks, kubelet timers);
- ``events``: the Kubernetes Events, appended.

Compaction is incremental, as etcd's: each write drops the revision that has just left the
watch window (``WINDOW`` revisions) unless a live object or the undo still needs it, and the
undo revision it replaces if that one is outside the window. So the log holds the window, the
live objects and one undo row, whatever the history; each write costs a few indexed statements.

The database runs in WAL mode, so readers in other processes (``get``, ``describe``) read the
last committed state while a command writes, without its lock. ``synchronous=NORMAL`` keeps a
commit durable across a killed process (the OS has the data); only a power cut may lose the last
commits, never consistency.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from katib_resume.core.kube import Manifest

WINDOW = 100
"""Revisions of the watch kept on disk: a consumer further behind relists (``Gone``)."""
Key = tuple[str, str, str, str]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS log (
    revision INTEGER PRIMARY KEY, type TEXT NOT NULL, api_version TEXT NOT NULL,
    kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects (
    api_version TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    revision INTEGER NOT NULL, created INTEGER NOT NULL,
    PRIMARY KEY (api_version, kind, namespace, name)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS objects_by_revision ON objects (revision);
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS state (
    id INTEGER PRIMARY KEY CHECK (id = 1), format INTEGER NOT NULL, version INTEGER NOT NULL,
    uids INTEGER NOT NULL, undo_key TEXT, undo_revision INTEGER, world TEXT);
"""
FORMAT = 2


def encode(value: Any) -> str:
    """Compact JSON, by ``orjson`` (tens of times faster than ``json`` on a Suggestion holding
    thousands of assignments). What reaches here is already JSON (the store's ``as_json``
    refused NaN and non-string keys on the way in). An integer beyond 64 bits, which ``orjson``
    refuses, is written by ``json`` behind one leading space (still JSON), so that ``decode``
    reads it back exactly with ``json`` (``orjson`` would read it as a float)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return " " + json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def decode(text: str) -> Any:
    """The value ``encode`` wrote (``orjson`` reads it a few times faster than ``json``)."""
    return json.loads(text) if text[:1].isspace() else orjson.loads(text)


def connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, a busy timeout."""
    if read_only:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    else:
        connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA busy_timeout = 10000")
    if not read_only:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.executescript(_SCHEMA)
    return connection


class Journal:
    """The durable copy of one ``Store``: ``put``/``drop`` each commit one change."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.db, self.path = connection, path
        row = connection.execute("SELECT world, undo_revision FROM state WHERE id = 1").fetchone()
        self.world: str | None = None if row is None else row[0]
        self.undo: int | None = None if row is None else row[1]
        """The undo revision committed last (kept here: every write replaces it)."""

    def put(self, key: Key, obj: Manifest, added: bool, before: int | None, uids: int) -> None:
        """``obj`` stored at its ``resourceVersion``; ``before``: the revision it replaces."""
        revision = int(obj["metadata"]["resourceVersion"])
        with transaction(self.db):
            self._log(revision, "ADDED" if added else "MODIFIED", key, encode(obj))
            self.db.execute(
                "INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE "
                "SET revision = excluded.revision",
                (*key, revision, revision),
            )
            self._advance(revision, key, before, uids)
        self.undo = before  # once committed: a rolled-back write leaves the undo as it was

    def drop(self, key: Key, last: Manifest, before: int) -> None:
        revision = int(last["metadata"]["resourceVersion"])
        with transaction(self.db):
            self._log(revision, "DELETED", key, encode(last))
            self.db.execute(
                "DELETE FROM objects WHERE api_version = ? AND kind = ? AND namespace = ? "
                "AND name = ?",
                key,
            )
            self._advance(revision, key, before, None)
        self.undo = before

    def event(self, body: dict[str, Any]) -> None:
        with transaction(self.db):
            self.db.execute("INSERT INTO events (body) VALUES (?)", (encode(body),))

    def checkpoint(self, world: dict[str, Any]) -> None:
        """The world's own state (clock, ticks, kubelet), written only when it changed."""
        text = encode(world)
        if text == self.world:
            return
        with transaction(self.db):
            self.db.execute("UPDATE state SET world = ? WHERE id = 1", (text,))
        self.world = text

    def close(self) -> None:
        """Back to a rollback journal when the writer leaves: the WAL is folded into the file
        and its side files go, so a reader with no writer about creates none (a busy reader
        keeps WAL mode, harmlessly: the next writer's close folds it)."""
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("PRAGMA journal_mode = DELETE")
        self.db.close()

    def _log(self, revision: int, kind: str, key: Key, body: str) -> None:
        row = (revision, kind, *key, body)
        self.db.execute("INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?)", row)

    def _advance(self, revision: int, key: Key, before: int | None, uids: int | None) -> None:
        """The counters and the undo move on; the revisions nobody needs any more go."""
        old_undo = self.undo
        self.db.execute(
            "UPDATE state SET version = ?, uids = COALESCE(?, uids), undo_key = ?, "
            "undo_revision = ? WHERE id = 1",
            (revision, uids, encode(list(key)), before),
        )
        oldest = revision - WINDOW  # the revision that has just left the window
        if old_undo is not None and old_undo <= oldest:
            self._forget(old_undo, before)
        self._forget(oldest, before)

    def _forget(self, revision: int, undo: int | None) -> None:
        if revision == undo or revision <= 0:
            return
        self.db.execute(
            "DELETE FROM log WHERE revision = ? AND NOT EXISTS "
            "(SELECT 1 FROM objects WHERE revision = ?)",
            (revision, revision),
        )


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on any error (nothing half-written)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
