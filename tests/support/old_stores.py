"""A fake cluster's database put back into an older store format, as that format's build left
it, so that reading and upgrading it can be tested without that build."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from katib_resume.adapters.fake.persistence import STATE_FILE


def as_format_5(state: Path) -> None:
    """The database of ``state`` as format 5 wrote it: its ``events`` table holds the Events'
    bodies only (no object columns, no index), and its state row says 5."""
    db = sqlite3.connect(state / STATE_FILE)
    try:
        db.executescript(
            "DROP INDEX events_by_object; ALTER TABLE events DROP COLUMN kind; "
            "ALTER TABLE events DROP COLUMN namespace; ALTER TABLE events DROP COLUMN name; "
            "UPDATE state SET format = 5;"
        )
        db.commit()
    finally:
        db.close()


def event_columns(state: Path) -> list[str]:
    """The columns of the ``events`` table of ``state``'s database."""
    db = sqlite3.connect(state / STATE_FILE)
    try:
        return [row[1] for row in db.execute("PRAGMA table_info(events)")]
    finally:
        db.close()
