"""A whole ``Store`` to and from the SQLite tables of ``sqlite.py``: loading, migrating, saving
an in-memory cluster for the first time.

Reading takes one read transaction, so a reader in another process sees one committed state even
while a command writes. The current objects are decoded once, a Trial's head only (its body when
first read: ``lazy.py``); the watch window's events that hold an object's current state share its
object, as the in-memory store's do. The Kubernetes Events are only counted when the state is
opened (``_Later``: fetched when first read, or only those about one object, by the index of
``event_index.py``), and read as text at the open from a database of a format without that index
(a reader reads it as it is); either way each is decoded when read (``_Decoded``; the cluster
decodes them when something first reads them: ``deferred.py``). A writer fetches only the live
objects in no block, and the blocks' rows: a block's members are fetched and decoded when its
store first needs one (``Members``, ``sealed.py``); a reader reads every member at the open. A
writer's Suggestion holds its assignments as the chain's texts, decoded when read
(``chained.py``); a reader's holds them decoded.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from functools import cached_property, partial
from operator import itemgetter
from typing import Any, overload

from katib_resume.adapters import heap
from katib_resume.adapters.fake import event_index, legacy, pages
from katib_resume.adapters.fake.chained import Chained, Texts, json_written
from katib_resume.adapters.fake.codec import decode, encode, encode_head
from katib_resume.adapters.fake.items import SPLIT, with_list
from katib_resume.adapters.fake.lazy import DamagedObject, Undecoded
from katib_resume.adapters.fake.sealed import Member
from katib_resume.adapters.fake.sqlite import (
    BLOCKED,
    BLOCKS,
    FORMAT,
    INDEXED,
    INSERT_LOG,
    READABLE,
    WINDOW,
    Key,
    Stored,
    stored_of,
    transaction,
)
from katib_resume.adapters.fake.store import Store, key_of
from katib_resume.adapters.fake.watch import WatchEvent, WatchLog
from katib_resume.adapters.fake.window import StoredWindow, Unread
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest

Snapshot = legacy.Snapshot
"""The store, the Kubernetes Events (as saved) and the world's own state (``None``: none yet)."""


def read(db: sqlite3.Connection, later: Connect | None = None, *, sealed: bool = False) -> Snapshot:
    """The state ``db`` holds. With ``later``, the Kubernetes Events of a database with their
    index are only counted, and fetched through a connection ``later`` opens when something
    first reads them (``_Later``): a restart reads none of them, ``describe`` those about the
    objects it describes. With ``sealed`` (a writer, which keeps ``db`` open), the members of
    the blocks stay on disk: the store gets the blocks unread, and reads a block's members
    through ``db`` when something needs one (``Members``); without, every member is read as
    any other object (a reader, which closes its connection at once)."""
    db.execute("BEGIN")
    try:
        row = db.execute(
            "SELECT format, version, uids, undo_key, undo_revision, world FROM state WHERE id = 1"
        ).fetchone()
        if row is None:
            return Store(), [], None
        form, version, uids, undo_key, undo_revision, world = row
        if form not in READABLE:
            raise ValueError(f"unsupported format {form!r} (expected {FORMAT})")
        stored = _Rows(db, form, chained=sealed)
        blocks = sealed and form >= BLOCKED
        current = stored.current(loose=blocks)
        members = Members(db, db.execute(BLOCKS).fetchall()) if blocks else None
        log = stored.window(version, current)
        undo: tuple[Key, Manifest | None] | None = None
        if undo_key is not None:
            before = None if undo_revision is None else stored.body(undo_revision, current)
            undo = (_key(decode(undo_key)), before)
        events: Sequence[Any]
        if later is None or form < INDEXED:
            events = _Decoded([body for (body,) in db.execute(_EVENTS)])
        else:
            first, last = db.execute(_EVENT_SPAN).fetchone()
            events = _Later(later, first, last)
    finally:
        db.execute("COMMIT")
    objects = {stored.keys[revision]: obj for revision, obj in current.items()}
    store = Store(objects, version, uids, log, undo, source=members, created=stored.created)
    return store, events, None if world is None else decode(world)


def write(db: sqlite3.Connection, snapshot: Snapshot) -> None:
    """Replace everything in ``db`` by ``snapshot``, in one transaction."""
    store, events, world = snapshot
    with transaction(db):
        for table in _TABLES:
            db.execute(f"DELETE FROM {table}")
        for event in store.log.events():
            _insert(db, event.type, event.object)
        for created, obj in enumerate(store.all()):  # kept in the order they were created
            revision = _insert(db, "MODIFIED", obj)  # every member read: no block written
            row = (*_key_of(obj), revision, created)
            db.execute(
                "INSERT INTO objects (api_version, kind, namespace, name, revision, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                row,
            )
        undo_key = undo_revision = None
        if store.undo is not None:
            undo_key = encode(list(store.undo[0]))
            if store.undo[1] is not None:
                undo_revision = _insert(db, "MODIFIED", store.undo[1])
        db.executemany(event_index.INSERT, [event_index.row(e, encode(e)) for e in events])
        db.execute(
            "INSERT INTO state VALUES (1, ?, ?, ?, ?, ?, ?)",
            (FORMAT, store.version, store.uids, undo_key, undo_revision, _world(world)),
        )


_TABLES = ("log", "items", "objects", "blocks", "events", "summaries", "summary_changes", "state")


def _world(world: dict[str, Any] | None) -> str | None:
    return None if world is None else encode(world)


def _insert(db: sqlite3.Connection, kind: str, obj: Manifest) -> int:
    """Log ``obj`` at its revision, unless that revision is logged already (the same state)."""
    revision = int(obj["metadata"]["resourceVersion"])
    row = (revision, kind, *_key_of(obj), encode(obj), None, None, encode_head(obj))
    db.execute(INSERT_LOG.replace("INSERT", "INSERT OR IGNORE", 1), row)
    return revision


def _key_of(obj: Manifest) -> Key:
    return key_of(ObjectRef.of(obj))


Row = tuple[int, str, str, str, str, str, str, int | None, int | None, str | None]
"""revision, type, apiVersion, kind, namespace, name, body, chain, items, head."""
_FEW = 64
"""Items decoded one by one rather than joined into one text (an Experiment's splices, at most
``splices.REBASE``): for a few, the calls cost less than copying a long one into the join (an
Experiment's first splice holds every name: 0.46 against 0.63 ms for its row at 5,000 Trials,
in a process just started)."""
_CREATED = itemgetter(10)
"""A live object's row: its ``objects.created``, after the ``Row``."""
_COLUMNS = {2: "NULL, NULL, NULL", 3: "log.chain, log.items, NULL", 4: "log.chain, log.items, NULL"}
"""The side-row and head columns of a format older than ``FORMAT`` (they did not exist yet)."""


class _Rows:
    """The log's rows read in one transaction, with the side rows of their long lists
    (``items.py``): each chain's items are read once, as text, and decoded per object."""

    def __init__(self, db: sqlite3.Connection, form: int, *, chained: bool = False) -> None:
        self.db = db
        self.columns = _COLUMNS.get(form, "log.chain, log.items, log.head")
        self.chained = chained
        """Whether a ``SPLIT`` list is left undecoded (a writer's open: ``chained.py``)."""
        self.chains: dict[int, list[str]] = {}
        self.texts: dict[int, Texts] = {}
        """Each chain's texts as the ``Chained`` lists share them (``chained``)."""
        self.last: dict[str, tuple[int, list[Any]]] = {}
        """By kind, the chain whose items were decoded last, and those items (``_items``)."""
        self.keys: dict[int, Key] = {}
        """The live objects' keys, by the revision of their current state (``current``)."""
        self.created: list[int] = []
        """Their ``objects.created``, in the same order (``current``)."""

    def current(self, *, loose: bool = False, block: int | None = None) -> dict[int, Manifest]:
        """The live objects by revision, in the order they were created (``loose``: those in
        no block; ``block``: that block's members). The rows are sorted here, not by SQLite,
        which would carry every body through its sorter (12 of 30 ms at 5,000 Trials); their
        keys are the ``objects`` table's, as the store keys them."""
        bound: tuple[int, ...] = ()
        where = ""
        if loose:
            where = " WHERE objects.block IS NULL"  # through ``objects_loose``: no pass
        elif block is not None:
            where, bound = " WHERE objects.block = ?", (block,)
        rows = self.db.execute(
            f"SELECT log.revision, log.type, log.api_version, log.kind, log.namespace, log.name, "
            f"log.body, {self.columns}, objects.created FROM objects "
            f"JOIN log ON log.revision = objects.revision{where}",
            bound,
        ).fetchall()
        rows.sort(key=_CREATED)
        self._read_chains(rows)
        self.keys = {row[0]: (row[2], row[3], row[4], row[5]) for row in rows}
        self.created = list(map(_CREATED, rows))
        return {row[0]: self.decoded(row) for row in rows}

    def window(self, version: int, current: dict[int, Manifest]) -> WatchLog:
        rows = self.db.execute(
            f"SELECT revision, type, api_version, kind, namespace, name, body, {self.columns} "
            "FROM log WHERE revision > ? ORDER BY revision",
            (version - WINDOW,),
        ).fetchall()
        self._read_chains(rows)
        events: list[WatchEvent | Unread] = []
        for row in rows:
            revision, kind, api_version, obj_kind, namespace, name = row[:6]
            obj = current.get(revision) if kind != "DELETED" else None
            if obj is not None:
                events.append(WatchEvent(kind, ObjectRef.of(obj), obj, str(revision)))
                continue
            ref = ObjectRef(api_version, obj_kind, namespace or None, name)
            events.append(Unread(kind, ref, str(revision), partial(self.decoded, row)))
        return StoredWindow(events, version - len(events))

    def body(self, revision: int, current: dict[int, Manifest]) -> Manifest | None:
        if revision in current:
            return current[revision]
        row = self.db.execute(
            f"SELECT revision, type, api_version, kind, namespace, name, body, {self.columns} "
            "FROM log WHERE revision = ?",
            (revision,),
        ).fetchone()
        if row is None:
            return None
        self._read_chains([row])
        return self.decoded(row)

    def decoded(self, row: Row) -> Manifest:
        """The object of one row, its long list put back from the chain's items; a row with
        a head, its head only until it is read (``lazy.py``)."""
        key: Key = (row[2], row[3], row[4], row[5])
        if row[9] is not None:
            head = decode(row[9])
            if type(head) is not dict or type(head.get("metadata")) is not dict:
                raise TypeError(f"the stored head of {key[1]} {key[3]!r} is not an object's")
            return Undecoded(head, row[6])
        obj = decode(row[6])
        if type(obj) is not dict:
            raise TypeError(f"the stored {key[1]} {key[3]!r} is not an object")
        chain, held = row[7], row[8]
        if chain is None or held is None:
            return obj
        if self.chained and key[:2] in SPLIT:
            return with_list(key, obj, Chained.of(self._texts(chain, held), held))
        return with_list(key, obj, self._items(key[1], chain, held))

    def _texts(self, chain: int, held: int) -> Texts:
        """The texts of ``chain``, at least ``held`` of them, shared by every revision of it
        read (so that one proves another its prefix: ``Chained.extends``), and decoded once."""
        texts = self.texts.get(chain)
        if texts is None or len(texts.texts) < held:
            texts = self.texts[chain] = Texts(self.chains[chain], chain)
        return texts

    def _items(self, kind: str, chain: int, held: int) -> list[Any]:
        """The first ``held`` items of ``chain``, decoded in one call. A chain's items never
        change, so the ones decoded last of each kind are kept and any revision of the same
        chain takes its first ``held`` of them (a copy of the list), decoding only those it
        lacks: after an ``edit`` the undo is the Experiment's revision before the live one, of
        the same chain, and an open decodes both. What is kept is what the live objects hold
        (the entries are shared, as the store's revisions share them), but for a revision of
        the window read since."""
        kept = self.last.get(kind)
        items = kept[1] if kept is not None and kept[0] == chain else []
        if len(items) < held:
            texts = self.chains[chain][len(items) : held]
            if len(texts) <= _FEW or json_written(texts):
                items = items + [decode(text) for text in texts]  # ``json``'s: see ``encode``
            else:
                items = items + decode("[" + ",".join(texts) + "]")
            self.last[kind] = (chain, items)
        return items[:held]

    def _read_chains(self, rows: list[Row]) -> None:
        """The items of every chain the rows name, as many as the longest row holds."""
        wanted: dict[int, int] = {}
        for row in rows:
            chain, held = row[7], row[8]
            if chain is None or held is None:
                continue
            if chain not in self.chains or len(self.chains[chain]) < held:
                wanted[chain] = max(wanted.get(chain, 0), held)
        for chain, held in wanted.items():
            self.chains[chain] = pages.read(self.db, chain, held)


class Members:
    """A writer's blocks on disk (``sealed.Source``): their rows, read at the open, and their
    members, read through the writer's connection when the store first needs one of them
    (decoded as the open decodes: a Trial by its head), looked up by key or UID through the
    ``objects`` table's primary key and its index of members' UIDs (``sqlite._SEALED``).
    The writer holds the state's lock, so what is read later is what was there at the open,
    and what this process wrote since."""

    def __init__(self, db: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
        self.db = db
        self.rows = rows

    def blocks(self) -> list[Stored]:
        return [stored_of(row) for row in self.rows]

    def members(self, block: int) -> list[Member]:
        """The members of ``block``; ``DamagedObject`` if one cannot be read, as a body that
        cannot be decoded is refused when first read (the open has long passed)."""
        rows = _Rows(self.db, FORMAT)
        try:
            with heap.paused():  # decoded JSON holds no cycles, as at the open (``heap``)
                current = rows.current(block=block)
        except _DAMAGED as error:
            raise DamagedObject(f"block {block} cannot be read: {error}") from None
        return [
            (rows.keys[revision], created, obj)
            for (revision, obj), created in zip(current.items(), rows.created, strict=True)
        ]

    def block_of(self, key: Key) -> int | None:
        found = self.db.execute(
            "SELECT block FROM objects WHERE api_version = ? AND kind = ? AND namespace = ? "
            "AND name = ?",
            key,
        ).fetchone()
        return None if found is None else found[0]

    def block_of_uid(self, uid: str) -> int | None:
        found = self.db.execute("SELECT block FROM objects WHERE uid = ?", (uid,)).fetchone()
        return None if found is None else found[0]


_DAMAGED = (ValueError, TypeError, KeyError)
"""What a row that cannot be read raises (``orjson``'s errors are ``ValueError``s)."""
_EVENTS = "SELECT body FROM events ORDER BY id"
_EVENT_SPAN = "SELECT (SELECT min(id) FROM events), (SELECT max(id) FROM events)"
"""The Events' first and last ids. Two queries: SQLite answers a lone ``min`` or ``max`` of the
key from an edge of the table's b-tree, but ``min(id), max(id)`` in one query is a pass over
every row (1.3 against 0.013 ms at 20,000 Events; more on a cold start, where the pass reads
every Event from disk). Their count is not asked: a ``count(*)`` counts every page's cells, 0.8
ms an open at 20,000 Events, and the table is only ever appended to (or written whole, from
id 1), so the ids between the two are all there; ``_Later`` checks it where it relies on it."""
_EVENT_COUNT = "SELECT count(*) FROM events WHERE id <= ?"
_EVENTS_UP_TO = "SELECT body FROM events WHERE id <= ? ORDER BY id"
Connect = Callable[[], sqlite3.Connection]


class _Later(Sequence[Any]):
    """The ``count`` Kubernetes Events stored up to the id ``last`` when the state was opened
    (those appended since are the cluster's own, or, for a reader, newer than what it read),
    fetched as text when one is first read, or only those about one object (``about``). The
    table is append-only for as long as this process holds the state's lock, so the ids up to
    ``last`` name the same Events then as at the open. A reader holds no lock: only a ``write``
    replaces the table (``save`` of a world not opened from this state; no command does), and
    a whole fetch that finds another count than the open's refuses it."""

    def __init__(self, connect: Connect, first: int | None, last: int | None) -> None:
        self.connect, self.first, self.last = connect, first, last
        self.size = 0 if first is None or last is None else last - first + 1
        """The Events from ``first`` to ``last``, every id between them being one (a table
        only ever appended to, as every command's): checked by a whole fetch (``_every``) and
        by a look-up by place (``_placed``), the reads that rely on it."""
        self.whole = _Fetched(self._every)

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        return self.whole[index]

    def _every(self) -> list[str]:
        """Every Event's text up to ``last``; raises ``ValueError`` if not the open's count."""
        texts = self._fetched(_EVENTS_UP_TO, (self.last,)) if self.size else []
        if len(texts) != self.size:
            raise ValueError(f"{self.size} stored Kubernetes Events expected, {len(texts)}")
        return texts

    def about(self, key: Any) -> Sequence[Any]:
        """The stored Events about the object ``key`` (kind, namespace, name), oldest first,
        with any whose object the index does not know (``event_index``): that object's rows,
        read through the index when first read (so a failure is the read's, as a whole fetch's
        is), however many others there are."""
        if not self.size:
            return _Decoded([])
        kind, namespace, name = key
        bound = (kind, namespace, name, self.last)
        return _Fetched(lambda: self._fetched(event_index.ABOUT, bound))

    def named(self, names: Collection[str]) -> tuple[list[int], Sequence[Any]] | None:
        """The stored Events about an object named one of ``names`` (of any kind and
        namespace), with any whose object the index does not know, oldest first, and the place
        of each in the list (1 for the first): read through the index's ``name`` column, the
        places being the ids. ``None`` where the ids are not the places, or for more names
        than a statement binds: the caller then scans."""
        if not self.size:
            return [], _Decoded([])
        if not self._placed or len(names) > event_index.NAMES_BOUND:
            return None
        query = event_index.NAMED.format(",".join("?" * len(names)))
        rows = self._rows(query, (self.last, *names))
        return [ident for ident, _ in rows], _Decoded([body for _, body in rows])

    @cached_property
    def _placed(self) -> bool:
        """Whether each Event's id is its place in the list, 1 for the first: the ids run from
        1 and none is missing up to ``last`` (counted once, when first asked)."""
        counted = self._rows(_EVENT_COUNT, (self.last,))[0][0]
        return self.first == 1 and bool(counted == self.size)

    def _fetched(self, query: str, bound: tuple[Any, ...]) -> list[str]:
        return [body for (body,) in self._rows(query, bound)]

    def _rows(self, query: str, bound: tuple[Any, ...]) -> list[Any]:
        """``query``'s rows, through a connection of their own (a reader holds none open)."""
        db = self.connect()
        try:
            return db.execute(query, bound).fetchall()
        finally:
            db.close()


class _Decoded(Sequence[Any]):
    """Stored JSON texts, each decoded when read."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [decode(text) for text in self.texts[index]]
        return decode(self.texts[index])


class _Fetched(Sequence[Any]):
    """Stored JSON texts fetched when one is first read, each decoded when read."""

    def __init__(self, fetch: Callable[[], list[str]]) -> None:
        self.fetch = fetch
        self.texts: _Decoded | None = None

    def __len__(self) -> int:
        return len(self._texts())

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        return self._texts()[index]

    def _texts(self) -> _Decoded:
        if self.texts is None:
            self.texts = _Decoded(self.fetch())
        return self.texts


def _key(raw: list[str]) -> Key:
    api_version, kind, namespace, name = (str(part) for part in raw)
    return (api_version, kind, namespace, name)
