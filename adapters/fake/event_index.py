"""The ``events`` table's index of the object each Kubernetes Event is about.

``describe`` shows the Events about the objects it describes; a 5,000-trial state holds 20,000
Events, four about each Trial, so finding one object's by decoding them all made its cost what
the whole history holds. Each row therefore carries the involved object's ``kind``,
``namespace`` and ``name`` beside its body, written with it (``Journal.event``, ``rows.write``),
and ``events_by_object`` indexes them: a look-up (``ABOUT``) reads that object's rows only, in
the order they were appended (the index ends in the row's id).

The columns say where to look, never what an Event is: the look-up's rows are decoded and held
to the same comparison as a scan's (``FakeCluster.events_about``), so what is found equals the
scan's answer exactly. A body whose involved object cannot be read from it (damaged, or not
shaped as this build writes Events: only a database upgraded from an older format can hold one)
gets NULL columns, and every look-up reads those rows too, so such an Event fails or matches the
look-up as it would the scan.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from katib_resume.adapters.fake.codec import decode

COLUMNS = (("kind", "TEXT"), ("namespace", "TEXT"), ("name", "TEXT"))
"""The involved object's columns, added by name to an older database's ``events``."""
INDEX = "CREATE INDEX IF NOT EXISTS events_by_object ON events (kind, namespace, name);"
INSERT = "INSERT INTO events (body, kind, namespace, name) VALUES (?, ?, ?, ?)"
ABOUT = (
    "SELECT body FROM events WHERE id <= ?4 AND (kind IS NULL OR "
    "(kind = ?1 AND namespace IS ?2 AND name = ?3)) ORDER BY id"
)
"""The rows of the Events about the object ``(kind, namespace, name)`` bound first to third, up
to the id bound fourth, oldest first; with the rows whose object is unknown (see above)."""
NAMED = "SELECT id, body FROM events WHERE id <= ? AND (kind IS NULL OR name IN ({})) ORDER BY id"
"""The ids and rows of the Events about an object of any kind named one of the names bound
after the id bound first (``{}``: their placeholders), up to that id, oldest first; with the
rows whose object is unknown. (The index leads with the kind, so SQLite scans the table's
columns for these, at C speed; no body but those found is read out.)"""
NAMES_BOUND = 500
"""The most names ``NAMED`` binds (SQLite's limit of bound values is far above it)."""

Involved = tuple[str | None, str | None, str | None]
UNKNOWN: Involved = (None, None, None)


def involved(body: Any) -> Involved:
    """The ``kind``, ``namespace`` (``None``: cluster-scoped) and ``name`` of the object the
    Event ``body`` (``Event.to_dict``) is about, or ``UNKNOWN`` if it names none."""
    ref = body.get("ref") if type(body) is dict else None
    if type(ref) is not dict:
        return UNKNOWN
    kind, namespace, name = ref.get("kind"), ref.get("namespace"), ref.get("name")
    if type(kind) is not str or type(name) is not str:
        return UNKNOWN
    if namespace is not None and type(namespace) is not str:
        return UNKNOWN
    return kind, namespace, name


def row(body: Any, text: str) -> tuple[str, str | None, str | None, str | None]:
    """The values ``INSERT`` binds for the Event ``body``, encoded as ``text``."""
    return (text, *involved(body))


def backfill(db: sqlite3.Connection) -> None:
    """Every row of a database that had no index gets its object's columns, once, in the
    caller's transaction (``sqlite._upgrade``); a body that cannot be decoded keeps NULLs."""
    found = []
    for ident, text in db.execute("SELECT id, body FROM events").fetchall():
        about = involved(_decoded(text))
        if about is not UNKNOWN:
            found.append((*about, ident))
    db.executemany("UPDATE events SET kind = ?, namespace = ?, name = ? WHERE id = ?", found)


def _decoded(text: Any) -> Any:
    """``text`` decoded, or ``None`` if it is not JSON (the Event's read will report it)."""
    try:
        return decode(text) if type(text) is str else None
    except ValueError:  # orjson's and json's decode errors are ValueErrors
        return None
