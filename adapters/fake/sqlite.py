"""The fake cluster on SQLite: every change committed when it happens, as kine keeps k3s's.

The in-memory ``Store`` stays the working set (reads never touch the disk); a ``Journal`` is its
durable copy, written through on every change in a transaction of its own, so a process killed
at any moment leaves the cluster as of its last completed write. The layout is kine's:

- ``log``: one row per revision (``resourceVersion``), the object as it was after the change
  (for a deletion, its last state): the watch, ordered by revision. A Suggestion's list of
  assignments is kept beside its row, in ``items``, so that a write stores only the items it
  appended (``items.py``), a page of consecutive items to a row (``pages.py``); a Trial's
  head (``apiVersion``, ``kind``, ``metadata``) is kept beside its body too, in ``head``,
  decoded alone when the state is opened (``lazy.py``);
- ``objects``: one row per live object, pointing at the revision that holds its current state,
  with the revision that created it (kine's ``create_revision``: the objects' order), and, for a
  member of a block, that block and its UID (indexed: the owner look-up of ``store.py``);
- ``blocks``: objects sealed together (``core.blocks``, ``sealed.py``): one row per block, with
  its kind, namespace, index fields, count, sum of fingerprints and note (read with the row),
  and its detail (read when asked for, ``Journal.detail``); a writer opens a block's members
  only when something needs one of them (``rows.py``);
- ``state``: the counters (version, UIDs), the key and revision of the change before the last
  (the lagging cache's ``undo``) and the world's own state (clock, ticks, kubelet timers);
- ``events``: the Kubernetes Events, appended, each with the kind, namespace and name of the
  object it is about, indexed, so that one object's are read without the others
  (``event_index.py``);
- ``summaries``: what a runtime keeps of its own folds between commands (``app.embedded.kept``:
  each Experiment's folds and settled Trials, verified against the objects' versions when read
  back), one row per object, deleted with it; ``summary_changes``: the changes appended to a
  summary since it was written whole, in order, deleted with it and when it is written whole.

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
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from katib_resume.adapters.fake import event_index, pages
from katib_resume.adapters.fake.codec import decode, encode, encode_head
from katib_resume.adapters.fake.items import side_rows, without_list
from katib_resume.core.blocks import Field
from katib_resume.core.digest import Digest
from katib_resume.core.manifest import Manifest

WINDOW = 100
"""Revisions of the watch kept on disk: a consumer further behind relists (``Gone``)."""
Key = tuple[str, str, str, str]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS log (
    revision INTEGER PRIMARY KEY, type TEXT NOT NULL, api_version TEXT NOT NULL,
    kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL,
    chain INTEGER, items INTEGER, head TEXT);
CREATE TABLE IF NOT EXISTS items (
    chain INTEGER NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (chain, idx)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS objects (
    api_version TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    revision INTEGER NOT NULL, created INTEGER NOT NULL, block INTEGER, uid TEXT,
    PRIMARY KEY (api_version, kind, namespace, name)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS objects_by_revision ON objects (revision);
CREATE TABLE IF NOT EXISTS blocks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, api_version TEXT NOT NULL, kind TEXT NOT NULL,
    namespace TEXT NOT NULL, fields TEXT NOT NULL, size INTEGER NOT NULL,
    total INTEGER NOT NULL, note TEXT NOT NULL, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, body TEXT NOT NULL, kind TEXT, namespace TEXT, name TEXT);
CREATE TABLE IF NOT EXISTS summaries (key TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS summary_changes (
    key TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (key, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state (
    id INTEGER PRIMARY KEY CHECK (id = 1), format INTEGER NOT NULL, version INTEGER NOT NULL,
    uids INTEGER NOT NULL, undo_key TEXT, undo_revision INTEGER, world TEXT);
"""
FORMAT = 8
"""2: without ``items`` (its log rows hold whole objects). 3: the Experiment's rows whole (4
keeps its trial-name lists as splices, ``splices.py``). 4: without ``head`` (its Trials decoded
whole). 5: its Events without the involved object's columns (``event_index.py``: found by a
scan). 6: without ``blocks`` (no object sealed). 7: an item to a row of ``items`` (``pages.py``:
a run of one). Each is read as it is, and upgraded when opened for writing (the columns it lacks
added, the live Trials' heads made, the Events' columns filled and indexed, marked 8: an older
build refuses an 8 rather than misread it, append Events the index would not find, write a
member without taking it out of its block, or read a page of items as one)."""
READABLE = (2, 3, 4, 5, 6, 7, FORMAT)
INDEXED = 6
"""The first format whose Events can be looked up by the object they are about."""
_OLDER = READABLE[:-1]
BLOCKED = 7
"""The first format that may hold blocks (``objects.block``)."""
_CHAINED = """
CREATE INDEX IF NOT EXISTS log_by_chain ON log (chain) WHERE chain IS NOT NULL;
"""
_SEALED = (
    "CREATE INDEX IF NOT EXISTS objects_by_block ON objects (block) WHERE block IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS objects_by_uid ON objects (uid) WHERE uid IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS objects_loose ON objects (revision, created) WHERE block IS NULL",
)
"""The members of a block, a member by its UID (``Store``'s owner look-up), and the live objects
in no block (what a writer opens: ``rows.read``), each found without a pass over the table."""


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
        _upgrade(connection)
    return connection


def _upgrade(db: sqlite3.Connection) -> None:
    """A database of an older ``FORMAT`` gets the columns it lacks (its objects' block and UID:
    none is a member), its live Trials' rows their heads (``_heads``) and its Events their
    involved objects (``event_index.backfill``), in one transaction with the new format, so an
    upgrade is done whole or not at all."""
    added = _missing(db, "log", _ADDED)
    unindexed = _missing(db, "events", event_index.COLUMNS)
    unsealed = _missing(db, "objects", _MEMBERS)
    older = db.execute(f"SELECT 1 FROM state WHERE format IN {_OLDER}").fetchone()
    if added or unindexed or unsealed or older:
        with transaction(db):
            for table, columns in (("log", added), ("events", unindexed), ("objects", unsealed)):
                for name, kind in columns:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
            if added:
                _heads(db)
            if unindexed:
                event_index.backfill(db)
                db.execute(event_index.INDEX)  # with the format: a reader of a 6 finds it
            for statement in _SEALED:  # with the format: a reader of a 7 finds them
                db.execute(statement)
            db.execute(f"UPDATE state SET format = ? WHERE format IN {_OLDER}", (FORMAT,))
    db.executescript(_CHAINED + event_index.INDEX + ";".join(_SEALED))


def _missing(
    db: sqlite3.Connection, table: str, wanted: tuple[tuple[str, str], ...]
) -> list[tuple[str, str]]:
    """The columns of ``wanted`` (name, type) that ``table`` lacks."""
    columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    return [(name, kind) for name, kind in wanted if name not in columns]


_ADDED = (("chain", "INTEGER"), ("items", "INTEGER"), ("head", "TEXT"))
"""The log's columns a database of an older format may lack (written by name, not position)."""
_MEMBERS = (("block", "INTEGER"), ("uid", "TEXT"))
"""The objects' columns a database of a format before ``BLOCKED`` lacks."""


def _heads(db: sqlite3.Connection) -> None:
    """Each live Trial's row gets its head, once, when its database gets the column: a Trial
    settled before is never written again, so without it every open would decode it whole."""
    rows = db.execute(
        "SELECT l.revision, l.body FROM objects o JOIN log l ON l.revision = o.revision "
        "WHERE l.kind = 'Trial' AND l.chain IS NULL"
    ).fetchall()
    heads = [(revision, decode(body)) for revision, body in rows]
    made = [(encode_head(obj), revision) for revision, obj in heads if type(obj) is dict]
    db.executemany("UPDATE log SET head = ? WHERE revision = ?", made)


class Journal:
    """The durable copy of one ``Store``: ``put``/``drop`` each commit one change."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.db, self.path = connection, path
        row = connection.execute("SELECT world, undo_revision FROM state WHERE id = 1").fetchone()
        self.world: str | None = None if row is None else row[0]
        self.undo: int | None = None if row is None else row[1]
        """The undo revision committed last (kept here: every write replaces it)."""
        self.chains: dict[Key, tuple[int, int, int]] = {
            (api_version, kind, namespace, name): (revision, chain, held)
            for api_version, kind, namespace, name, revision, chain, held in connection.execute(
                "SELECT o.api_version, o.kind, o.namespace, o.name, l.revision, l.chain, l.items "
                "FROM objects o JOIN log l ON l.revision = o.revision WHERE l.chain IS NOT NULL"
            )
        }
        """Each live object's revision, chain and item count, for an object whose long list
        is kept as side rows (``items.py``)."""

    def put(
        self,
        key: Key,
        obj: Manifest,
        before: Manifest | None,
        uids: int,
        out: Leaving | None = None,
    ) -> None:
        """``obj`` stored at its ``resourceVersion``, replacing ``before`` (``None``: new); a
        member written leaves its block (``out``: the block and its digest without it)."""
        revision, replaced = int(obj["metadata"]["resourceVersion"]), _revision(before)
        with transaction(self.db):
            change = "ADDED" if before is None else "MODIFIED"
            chained = self._log(revision, change, key, obj, before)
            self.db.execute(
                "INSERT INTO objects (api_version, kind, namespace, name, revision, created) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE "
                "SET revision = excluded.revision, block = NULL, uid = NULL",
                (*key, revision, revision),
            )
            self._leave(out)
            self._advance(revision, key, replaced, uids)
        self.undo = replaced  # once committed: a rolled-back write leaves the undo as it was
        if chained is None:
            self.chains.pop(key, None)
        else:
            self.chains[key] = (revision, *chained)

    def drop(self, key: Key, last: Manifest, before: Manifest, out: Leaving | None = None) -> None:
        """``before`` deleted; ``last``: its last state, at the deletion's revision; a member
        leaves its block (``out``, as in ``put``)."""
        revision, replaced = int(last["metadata"]["resourceVersion"]), _revision(before)
        assert replaced is not None
        with transaction(self.db):
            self._log(revision, "DELETED", key, last, before)
            self.db.execute(
                "DELETE FROM objects WHERE api_version = ? AND kind = ? AND namespace = ? "
                "AND name = ?",
                key,
            )
            self._leave(out)
            self.db.execute("DELETE FROM summaries WHERE key = ?", (summary_key(key),))
            self.db.execute("DELETE FROM summary_changes WHERE key = ?", (summary_key(key),))
            self._advance(revision, key, replaced, None)
        self.undo = replaced
        self.chains.pop(key, None)

    def seal(self, block: Stored, members: Sequence[tuple[Key, str]], detail: str = "") -> int:
        """The live objects ``members`` (keys and UIDs) made the block ``block`` (its ``id``
        ignored), with ``detail``, in one transaction; the new block's id (never one used
        before)."""
        with transaction(self.db):
            made = self._block(block, detail)
            marked = self.db.executemany(
                "UPDATE objects SET block = ?, uid = ? WHERE api_version = ? AND kind = ? "
                "AND namespace = ? AND name = ? AND block IS NULL",
                [(made, uid, *key) for key, uid in members],
            ).rowcount
            if marked != len(members):
                raise ValueError(f"{len(members)} objects to seal, {marked} stored in no block")
        return made

    def merge(self, ids: Sequence[int], block: Stored, detail: str = "") -> int:
        """The blocks ``ids`` made one, ``block`` (its ``id`` ignored) with ``detail``, in one
        transaction; the new block's id."""
        with transaction(self.db):
            made = self._block(block, detail)
            self.db.executemany(
                "UPDATE objects SET block = ? WHERE block = ?", [(made, i) for i in ids]
            )
            gone = self.db.executemany("DELETE FROM blocks WHERE id = ?", [(i,) for i in ids])
            if gone.rowcount != len(ids):
                raise ValueError(f"{len(ids)} blocks to merge, {gone.rowcount} stored")
        return made

    def event(self, body: dict[str, Any]) -> None:
        with transaction(self.db):
            self.db.execute(event_index.INSERT, event_index.row(body, encode(body)))

    def checkpoint(self, world: dict[str, Any]) -> None:
        """The world's own state (clock, ticks, kubelet), written only when it changed."""
        text = encode(world)
        if text == self.world:
            return
        with transaction(self.db):
            self.db.execute("UPDATE state SET world = ? WHERE id = 1", (text,))
        self.world = text

    def summaries(self) -> dict[str, str]:
        """Every summary kept, by ``summary_key`` (``summarise``)."""
        return dict(self.db.execute("SELECT key, body FROM summaries").fetchall())

    def summary_changes(self) -> dict[str, list[str]]:
        """Every summary's changes (``summarise``), by ``summary_key``, oldest first."""
        found: dict[str, list[str]] = {}
        for key, body in self.db.execute("SELECT key, body FROM summary_changes ORDER BY key, seq"):
            found.setdefault(key, []).append(body)
        return found

    def summarise(self, bodies: dict[Key, str], changes: dict[Key, str] | None = None) -> None:
        """Keep ``bodies`` (an object's key -> its summary, whole), replacing what was kept for
        the same objects and their changes, and append ``changes`` (an object's key -> one
        change of its summary), in one transaction; nothing is kept for an object no longer
        stored (``drop``)."""
        changes = changes or {}
        if not bodies and not changes:
            return
        with transaction(self.db):
            self.db.executemany(
                "DELETE FROM summary_changes WHERE key = ?", [(summary_key(k),) for k in bodies]
            )
            self.db.executemany(
                f"INSERT INTO summaries SELECT ?1, ?2 WHERE {_STORED} "
                "ON CONFLICT DO UPDATE SET body = excluded.body",
                [(summary_key(key), body, *key) for key, body in bodies.items()],
            )
            self.db.executemany(
                "INSERT INTO summary_changes SELECT ?1, 1 + coalesce((SELECT max(seq) FROM "
                f"summary_changes WHERE key = ?1), 0), ?2 WHERE {_STORED}",
                [(summary_key(key), body, *key) for key, body in changes.items()],
            )

    def written_since(self, revision: int, kind: str, namespace: str) -> bool:
        """Whether an object of ``kind`` in ``namespace`` was written (made, changed or
        deleted) after ``revision``: a look in the log's rows since, all of which it still
        holds while ``revision`` is within the watch's ``WINDOW`` of the newest; further back,
        ``True`` (it cannot say no)."""
        (version,) = self.db.execute("SELECT version FROM state WHERE id = 1").fetchone()
        if revision < version - WINDOW:
            return True
        found = self.db.execute(
            "SELECT 1 FROM log WHERE revision > ? AND kind = ? AND namespace = ? LIMIT 1",
            (revision, kind, namespace),
        )
        return found.fetchone() is not None

    def close(self) -> None:
        """Back to a rollback journal when the writer leaves: the WAL is folded into the file
        and its side files go, so a reader with no writer about creates none (a busy reader
        keeps WAL mode, harmlessly: the next writer's close folds it)."""
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("PRAGMA journal_mode = DELETE")
        self.db.close()

    def detail(self, block: int) -> str:
        """The detail kept with ``block`` (``ValueError``: no such block)."""
        row = self.db.execute("SELECT detail FROM blocks WHERE id = ?", (block,)).fetchone()
        if row is None:
            raise ValueError(f"no block {block} is stored")
        return str(row[0])

    def _block(self, block: Stored, detail: str) -> int:
        made = self.db.execute(
            "INSERT INTO blocks (api_version, kind, namespace, fields, size, total, note, "
            "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (*block_row(block)[1:], detail),
        ).lastrowid
        assert made is not None
        return made

    def _leave(self, out: Leaving | None) -> None:
        """The block an object leaves, less that object: its count and sum, or gone if empty."""
        if out is None:
            return
        block, left = out
        if left.size:
            self.db.execute(
                "UPDATE blocks SET size = ?, total = ? WHERE id = ?",
                (left.size, signed(left.total), block),
            )
        else:
            self.db.execute("DELETE FROM blocks WHERE id = ?", (block,))

    def _log(
        self, revision: int, kind: str, key: Key, obj: Manifest, before: Manifest | None
    ) -> tuple[int, int] | None:
        """The revision's row (and its new side rows); its chain and item count, if any."""
        stored = None if before is None else self.chains.get(key)
        _, chain, held = stored if stored and stored[0] == _revision(before) else (0, 0, -1)
        side = side_rows(key, obj, before, held)
        if side is None:
            row = (revision, kind, *key, encode(obj), None, None, encode_head(obj))
            self.db.execute(INSERT_LOG, row)
            return None
        fresh_chain, items, total = side
        if fresh_chain:
            chain, held = revision, 0  # a new chain, named by the revision that starts it
        pages.append(self.db, chain, held, [encode(item) for item in items])
        body = encode(without_list(key, obj))
        self.db.execute(INSERT_LOG, (revision, kind, *key, body, chain, total, None))
        return chain, total

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
        row = self.db.execute("SELECT chain FROM log WHERE revision = ?", (revision,)).fetchone()
        gone = self.db.execute(
            "DELETE FROM log WHERE revision = ? AND NOT EXISTS "
            "(SELECT 1 FROM objects WHERE revision = ?)",
            (revision, revision),
        ).rowcount
        if gone and row[0] is not None and not self._named(row[0]):
            # the chain's items go with the last row naming it; asked first, on its own: as one
            # statement's condition SQLite tests it against every item of a chain still named
            # (the Suggestion's, every assignment), a pass over the history per write
            self.db.execute("DELETE FROM items WHERE chain = ?", (row[0],))

    def _named(self, chain: int) -> bool:
        """Whether some row of the log still names ``chain`` (an index look-up)."""
        found = self.db.execute("SELECT 1 FROM log WHERE chain = ? LIMIT 1", (chain,))
        return found.fetchone() is not None


_STORED = (
    "EXISTS (SELECT 1 FROM objects WHERE api_version = ?3 AND kind = ?4 AND namespace = ?5 "
    "AND name = ?6)"
)
"""Whether the object of the key bound third to sixth is stored: a summary, or a change of
one, is kept only for an object stored (``drop`` deletes both with it)."""
INSERT_LOG = (
    "INSERT INTO log (revision, type, api_version, kind, namespace, name, body, chain, items, "
    "head) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


Leaving = tuple[int, Digest]
"""A block a member leaves (written or deleted), and the block's digest without it."""


class Stored(NamedTuple):
    """A row of ``blocks``: what a store knows of a block without its members."""

    id: int
    api_version: str
    kind: str
    namespace: str
    fields: frozenset[Field]
    digest: Digest
    note: str


BLOCKS = "SELECT id, api_version, kind, namespace, fields, size, total, note FROM blocks"


def block_row(block: Stored) -> tuple[Any, ...]:
    """``block`` as a row of ``blocks`` (its fields sorted, as JSON; its sum signed)."""
    fields = encode(sorted(map(list, block.fields)))
    digest = block.digest
    where = (block.api_version, block.kind, block.namespace)
    return (block.id, *where, fields, digest.size, signed(digest.total), block.note)


def stored_of(row: tuple[Any, ...]) -> Stored:
    """A row of ``blocks`` (``BLOCKS``) read back."""
    ident, api_version, kind, namespace, fields, size, total, note = row
    pairs = frozenset((str(field), str(value)) for field, value in decode(fields))
    return Stored(ident, api_version, kind, namespace, pairs, Digest(size, total & _MASK), note)


_MASK = (1 << 64) - 1


def signed(total: int) -> int:
    """A sum of fingerprints (modulo 2**64) as SQLite's signed 64-bit integer."""
    return total - (1 << 64) if total >> 63 else total


def summary_key(key: Key) -> str:
    """The ``summaries`` row of the object ``key``: it goes when the object does (``drop``),
    so a deleted Experiment leaves nothing behind, and a namesake made later starts bare."""
    _, kind, namespace, name = key
    return f"{kind.lower()}:{namespace}/{name}"


def _revision(obj: Manifest | None) -> int | None:
    return None if obj is None else int(obj["metadata"]["resourceVersion"])


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on any error (nothing half-written).

    Ctrl-C, SIGTERM and SIGHUP arrive as a ``KeyboardInterrupt`` between any two bytecodes, so
    ``BEGIN`` is inside the ``try`` (an interrupt right after it rolls back), and a transaction
    still open when the next one starts is one an interrupt left behind: it is rolled back, so
    the command's last commit (the world's checkpoint as it stops) still happens. An interrupt
    that lands between entering and the ``with`` taking hold leaves this generator to be closed
    when it is collected, perhaps after the connection: closing a connection already discarded
    what it had open, so there is nothing left to roll back then."""
    try:
        if db.in_transaction:
            db.execute("ROLLBACK")
        db.execute("BEGIN IMMEDIATE")
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.ProgrammingError):  # the connection is closed
            if db.in_transaction:
                db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
