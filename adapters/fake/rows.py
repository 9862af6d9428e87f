"""A whole ``Store`` to and from the SQLite tables of ``sqlite.py``: loading, migrating, saving
an in-memory cluster for the first time.

Reading takes one read transaction, so a reader in another process sees one committed state even
while a command writes. The current objects are decoded once; the watch window's events that hold
an object's current state share its decoded dict, as the in-memory store's do.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from katib_resume.adapters.fake import legacy
from katib_resume.adapters.fake.sqlite import FORMAT, WINDOW, Key, decode, encode, transaction
from katib_resume.adapters.fake.store import Store, key_of
from katib_resume.adapters.fake.watch import WatchEvent, WatchLog
from katib_resume.core.actions import ObjectRef
from katib_resume.core.kube import Manifest

Snapshot = legacy.Snapshot
"""The store, the Kubernetes Events (as saved) and the world's own state (``None``: none yet)."""


def read(db: sqlite3.Connection) -> Snapshot:
    db.execute("BEGIN")
    try:
        row = db.execute(
            "SELECT format, version, uids, undo_key, undo_revision, world FROM state WHERE id = 1"
        ).fetchone()
        if row is None:
            return Store(), [], None
        form, version, uids, undo_key, undo_revision, world = row
        if form != FORMAT:
            raise ValueError(f"unsupported format {form!r} (expected {FORMAT})")
        current = _current(db)
        log = _window(db, version, current)
        undo: tuple[Key, Manifest | None] | None = None
        if undo_key is not None:
            before = None if undo_revision is None else _body(db, undo_revision, current)
            undo = (_key(decode(undo_key)), before)
        events = [decode(body) for (body,) in db.execute("SELECT body FROM events ORDER BY id")]
    finally:
        db.execute("COMMIT")
    objects = {key_of(ObjectRef.of(obj)): obj for obj in current.values()}
    store = Store(objects, version, uids, log, undo)
    return store, events, None if world is None else decode(world)


def write(db: sqlite3.Connection, snapshot: Snapshot) -> None:
    """Replace everything in ``db`` by ``snapshot``, in one transaction."""
    store, events, world = snapshot
    with transaction(db):
        for table in ("log", "objects", "events", "state"):
            db.execute(f"DELETE FROM {table}")
        for event in store.log.events():
            _insert(db, event.type, event.object)
        for created, obj in enumerate(store.all()):  # kept in the order they were created
            revision = _insert(db, "MODIFIED", obj)
            row = (*_key_of(obj), revision, created)
            db.execute("INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?)", row)
        undo_key = undo_revision = None
        if store.undo is not None:
            undo_key = encode(list(store.undo[0]))
            if store.undo[1] is not None:
                undo_revision = _insert(db, "MODIFIED", store.undo[1])
        db.executemany("INSERT INTO events (body) VALUES (?)", [(encode(e),) for e in events])
        db.execute(
            "INSERT INTO state VALUES (1, ?, ?, ?, ?, ?, ?)",
            (FORMAT, store.version, store.uids, undo_key, undo_revision, _world(world)),
        )


def _world(world: dict[str, Any] | None) -> str | None:
    return None if world is None else encode(world)


def _insert(db: sqlite3.Connection, kind: str, obj: Manifest) -> int:
    """Log ``obj`` at its revision, unless that revision is logged already (the same state)."""
    revision = int(obj["metadata"]["resourceVersion"])
    db.execute(
        "INSERT OR IGNORE INTO log VALUES (?, ?, ?, ?, ?, ?, ?)",
        (revision, kind, *_key_of(obj), encode(obj)),
    )
    return revision


def _key_of(obj: Manifest) -> Key:
    return key_of(ObjectRef.of(obj))


def _current(db: sqlite3.Connection) -> dict[int, Manifest]:
    rows = db.execute(
        "SELECT log.revision, log.body FROM objects JOIN log ON log.revision = objects.revision "
        "ORDER BY objects.created"
    )
    return {revision: decode(body) for revision, body in rows}


def _window(db: sqlite3.Connection, version: int, current: dict[int, Manifest]) -> WatchLog:
    rows = db.execute(
        "SELECT revision, type, body FROM log WHERE revision > ? ORDER BY revision",
        (version - WINDOW,),
    ).fetchall()
    events = []
    for revision, kind, body in rows:
        obj = current.get(revision) if kind != "DELETED" else None
        data = {"type": kind, "object": obj or decode(body), "resourceVersion": revision}
        events.append(WatchEvent.from_dict(data))
    return WatchLog(events, version - len(events))


def _body(db: sqlite3.Connection, revision: int, current: dict[int, Manifest]) -> Manifest | None:
    if revision in current:
        return current[revision]
    row = db.execute("SELECT body FROM log WHERE revision = ?", (revision,)).fetchone()
    return None if row is None else dict(decode(row[0]))


def _key(raw: list[str]) -> Key:
    api_version, kind, namespace, name = (str(part) for part in raw)
    return (api_version, kind, namespace, name)
