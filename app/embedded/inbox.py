"""The state directory's inbox: how a writing command reaches the ``run`` that holds the state.

One command at a time writes a state directory (its lock: ``bootstrap``). A ``run`` can go on
for hours (with no trial limit, until Ctrl-C), and a user who starts another Experiment, raises
a budget or deletes something meanwhile should be neither refused nor kept waiting for it. So a
writing command that finds the directory locked leaves its request here, in ``inbox.db``
(SQLite beside ``cluster.db``: no request touches the store's tables or its format), and the
``run`` holding the lock takes it between two steps of its runtime (``app/cli/serving.py``):
it does the command in its own process, on the state it holds, and answers with the command's
output and exit status; a ``run`` it answers by advancing that Experiment too and reporting on
it, until it completes or the holder ends (``app/cli/handover.py`` follows it and, when the
holder ends first, takes the lock and carries on itself).

A request moves ``pending`` -> ``taken`` -> ``done``; ``pending`` -> ``withdrawn`` (its
command got the lock first, or was interrupted); or ``taken`` -> ``following`` -> ``done``,
``left`` (the holder ended first) or ``released`` (its command was interrupted). Each move is
one UPDATE conditioned on the state it leaves, so a withdrawal and a take never both happen.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

FILE = "inbox.db"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS requests ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, pid INTEGER NOT NULL, args TEXT NOT NULL,"
    " state TEXT NOT NULL DEFAULT 'pending', code INTEGER, out TEXT NOT NULL DEFAULT '',"
    " err TEXT NOT NULL DEFAULT '', target TEXT, progress TEXT)"
)
DONE, FOLLOWING, LEFT, PENDING, RELEASED, TAKEN, WITHDRAWN = (
    "done",
    "following",
    "left",
    "pending",
    "released",
    "taken",
    "withdrawn",
)


@dataclass(frozen=True, slots=True)
class Request:
    """One request as last committed."""

    state: str
    code: int | None
    out: str
    err: str
    target: str | None
    """``namespace/name`` of the Experiment a followed ``run`` advances."""
    progress: str | None


class Inbox:
    """``inbox.db`` of a state directory, for either side. ``sqlite3.Error`` where it cannot be
    used (the caller then refuses as a locked directory always was)."""

    def __init__(self, state_dir: Path) -> None:
        self.db = sqlite3.connect(Path(state_dir) / FILE, timeout=10, isolation_level=None)
        try:
            self.db.execute(_SCHEMA)
        except BaseException:
            self.db.close()
            raise
        self._seen: int | None = None

    def close(self) -> None:
        self.db.close()

    def submit(self, pid: int, args: str) -> int:
        cursor = self.db.execute("INSERT INTO requests (pid, args) VALUES (?, ?)", (pid, args))
        return int(cursor.lastrowid or 0)

    def get(self, ident: int) -> Request | None:
        row = self.db.execute(
            "SELECT state, code, out, err, target, progress FROM requests WHERE id = ?", (ident,)
        ).fetchone()
        return None if row is None else Request(*row)

    def move(self, ident: int, leaving: tuple[str, ...], state: str) -> bool:
        """Move the request to ``state`` if it is in one of ``leaving``; whether it moved."""
        marks = ",".join("?" * len(leaving))
        cursor = self.db.execute(
            f"UPDATE requests SET state = ? WHERE id = ? AND state IN ({marks})",
            (state, ident, *leaving),
        )
        return cursor.rowcount == 1

    # the holder's side

    def changed(self) -> bool:
        """Whether another connection committed since this one last asked (SQLite's
        ``data_version``: a few microseconds, so the holder asks after every step)."""
        (version,) = self.db.execute("PRAGMA data_version").fetchone()
        seen, self._seen = self._seen, int(version)
        return seen != self._seen

    def pending(self) -> list[tuple[int, int, str]]:
        """The pending requests, oldest first: (id, pid, args)."""
        return self.db.execute(
            "SELECT id, pid, args FROM requests WHERE state = ? ORDER BY id", (PENDING,)
        ).fetchall()

    def answer(self, ident: int, code: int, out: str, err: str) -> None:
        self.db.execute(
            "UPDATE requests SET state = ?, code = ?, out = ?, err = ? WHERE id = ?",
            (DONE, code, out, err, ident),
        )

    def follow(self, ident: int, target: str, err: str) -> None:
        """The holder advances the Experiment ``target`` for the request (``err``: the notices
        its start printed)."""
        self.db.execute(
            "UPDATE requests SET state = ?, target = ?, err = ? WHERE id = ?",
            (FOLLOWING, target, err, ident),
        )

    def report(self, ident: int, progress: str) -> None:
        self.db.execute("UPDATE requests SET progress = ? WHERE id = ?", (progress, ident))

    def states(self, idents: list[int]) -> dict[int, str]:
        marks = ",".join("?" * len(idents))
        rows = self.db.execute(
            f"SELECT id, state FROM requests WHERE id IN ({marks})", idents
        ).fetchall()
        return dict(rows)

    def forget(self, alive: Callable[[int], bool]) -> None:
        """Drop every request whose command has gone (killed before it read its answer)."""
        rows = self.db.execute("SELECT id, pid FROM requests").fetchall()
        for ident, pid in rows:
            if not alive(pid):
                self.drop(ident)

    def drop(self, ident: int) -> None:
        """Delete a request that is over (its command has read the answer, or has gone): the
        inbox holds only what is in flight, whatever the number of commands before."""
        self.db.execute("DELETE FROM requests WHERE id = ?", (ident,))
