"""Blocks change no answer of the fake API server: a cluster on disk whose objects are sealed
into blocks (``Store.seal``, ``Store.merge``), reopened so that the blocks are held unread and
read on demand, answers every operation exactly as a cluster in memory that never sealed
anything does, and keeps each block's record on disk equal to its members.

Random sequences of creates (Trials under an Experiment or another Trial, or under none, or
under an owner long gone; ConfigMaps owned by Trials), updates, status writes, finalizers,
deletions (with and without a UID precondition), gets and lists (by namespace, by the indexed
experiment label and by a label that is not indexed, stale ones too), whole lists and the
informer's ``list_blocks_at``, garbage collection (at once or in passes), watch changes and
digests, with seals, merges and reopenings of the state between them. After every operation the
answers, the digests of every kind, and each block's stored count and sum agree; at the end the
state reopened, and read by a reader, holds the objects the cluster in memory holds.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from katib_resume.adapters.fake import FakeCluster, FakeWorld, load
from katib_resume.adapters.fake.owners import owner_uids
from katib_resume.adapters.fake.persistence import STATE_FILE, close, read
from katib_resume.adapters.fake.sqlite import WINDOW, signed
from katib_resume.adapters.fake.store import Key, key_of
from katib_resume.core.actions import ObjectRef
from katib_resume.core.digest import fingerprint
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.object_index import OWNER, Index
from katib_resume.core.objects import INDEXED_LABELS
from katib_resume.core.ports import ClusterError

TRIAL, EXPERIMENT, CONFIG = (API_VERSION, "Trial"), (API_VERSION, "Experiment"), ("v1", "ConfigMap")
KINDS = (TRIAL, EXPERIMENT, CONFIG)
NAMESPACES = ("a", "b")
PREFIX = {TRIAL: "t", EXPERIMENT: "e", CONFIG: "c"}
LABELS: tuple[dict[str, str], ...] = (
    {},
    {LABEL_EXPERIMENT: "e0"},
    {LABEL_EXPERIMENT: "e1"},
    {"x": "1"},
    {LABEL_EXPERIMENT: "e0", "x": "1"},
)
SELECTORS = LABELS
OWNERS = ("none", "e0", "e1", "t0", "t1", "gone")
_INDEX = Index(INDEXED_LABELS)

kinds = st.sampled_from([TRIAL, TRIAL, TRIAL, EXPERIMENT, CONFIG])
spaces = st.sampled_from(NAMESPACES)
names = st.integers(0, 5)
CREATE = st.tuples(
    st.just("create"),
    kinds,
    spaces,
    names,
    st.integers(0, len(LABELS) - 1),
    st.sampled_from(OWNERS),
    st.booleans(),
)
LIST = st.tuples(
    st.just("list"),
    kinds,
    st.sampled_from([*NAMESPACES, None]),
    st.integers(0, len(SELECTORS) - 1),
    st.booleans(),
)
SEAL = st.tuples(
    st.sampled_from(["seal", "seal", "seal each", "merge"]),
    spaces,
    st.integers(0, 7),
    st.integers(0, 255),
)
REOPEN = st.just(("reopen",))
OPS = st.one_of(
    CREATE,
    st.tuples(st.just("relabel"), kinds, spaces, names, st.integers(0, len(LABELS) - 1)),
    st.tuples(st.just("status"), kinds, spaces, names, st.integers(0, 2)),
    st.tuples(st.just("finalize"), kinds, spaces, names, st.booleans()),
    st.tuples(st.just("delete"), kinds, spaces, names, st.sampled_from(["", "right", "wrong"])),
    st.tuples(st.just("delete"), st.just(EXPERIMENT), spaces, st.integers(0, 1), st.just("")),
    st.tuples(st.just("get"), kinds, spaces, names, st.booleans()),
    LIST,
    LIST,
    st.tuples(st.just("list_at"), kinds, st.booleans()),
    st.tuples(st.just("blocks"), kinds, st.booleans()),
    st.just(("collect",)),
    st.just(("collect",)),
    st.tuples(st.just("watch"), st.integers(0, WINDOW)),
    SEAL,
    SEAL,
    REOPEN,
    REOPEN,
    REOPEN,
)
TRIALS = st.lists(
    st.builds(
        lambda space, n, placed: ("create", TRIAL, space, n, *placed, False),
        spaces,
        st.integers(0, 5),
        st.sampled_from(
            [(1, "e0")] * 3
            + [(4, "e0")] * 2
            + [(2, "e1")] * 3
            + [(0, "none"), (3, "t0"), (1, "gone")]
        ),
    ),
    min_size=2,
    max_size=12,
)
"""A history to start from: Trials of two Experiments, most of them sealable."""
HISTORY = [
    ("create", EXPERIMENT, space, n, 0, "none", False) for space in NAMESPACES for n in (0, 1)
]
"""The Experiments every history starts with."""
SEALED = st.sampled_from(
    [
        [("seal", "a", 0, 255), ("seal", "b", 1, 255), ("reopen",)],
        [("seal each", "a", 0, 0), ("seal each", "b", 0, 0), ("reopen",), ("merge", "a", 0, 255)],
        [("seal each", "a", 1, 0), ("merge", "a", 0, 255), ("reopen",)],
        [("seal", "a", 0, 5), ("seal", "a", 0, 255), ("reopen",), ("merge", "a", 0, 1)],
    ]
)
"""How the history is sealed before the operations: blocks unread, merged or not."""


def _ref(kind: tuple[str, str], namespace: str, n: int) -> ObjectRef:
    """The object ``n`` of ``kind`` in ``namespace``."""
    return ObjectRef(kind[0], kind[1], namespace, f"{PREFIX[kind]}{n}")


def _owner(oracle: FakeCluster, kind: tuple[str, str], namespace: str, owner: str) -> list[Any]:
    """The owner references of a new object: its controller (an Experiment or a Trial of its
    namespace, held or not, or one long gone), or none."""
    if owner == "none":
        return []
    if owner == "gone":
        return [
            {"apiVersion": "v1", "kind": "Gone", "name": "g", "uid": "gone", "controller": True}
        ]
    of = EXPERIMENT if owner[0] == "e" else TRIAL
    if kind == CONFIG:
        of = TRIAL  # a ConfigMap is a Trial's dependent
    ref = _ref(of, namespace, int(owner[1]))
    found = oracle.store.find(ref)
    uid = found["metadata"]["uid"] if found is not None else f"never-{ref.name}"
    return [{"apiVersion": of[0], "kind": of[1], "name": ref.name, "uid": uid, "controller": True}]


def _resolved(oracle: FakeCluster, op: tuple[Any, ...]) -> tuple[Any, ...]:
    """``op`` with what it names looked up in ``oracle`` before either cluster does it: a new
    object's manifest (its owners' UIDs), a deletion's UID precondition, a watch's cursor."""
    what = op[0]
    if what == "create":
        _, kind, namespace, n, labels, owner, second = op
        meta: dict[str, Any] = {"name": _ref(kind, namespace, n).name, "namespace": namespace}
        meta["labels"] = dict(LABELS[labels])
        refs = _owner(oracle, kind, namespace, owner)
        if second:  # an owner that is not the controller: such an object is never sealed
            refs.append({"apiVersion": "v1", "kind": "Other", "name": "o", "uid": "other"})
        if refs:
            meta["ownerReferences"] = refs
        return (what, {"apiVersion": kind[0], "kind": kind[1], "metadata": meta})
    if what == "delete" and op[4] == "right":
        found = oracle.store.find(_ref(op[1], op[2], op[3]))
        return (*op[:4], "" if found is None else found["metadata"]["uid"])
    if what == "watch":
        return (what, max(0, oracle.cursor - op[1]))
    return op


def _answer(cluster: FakeCluster, op: tuple[Any, ...]) -> Any:
    """What ``cluster`` answers to ``op`` (``_resolved``), an error by its type and message."""
    try:
        return _answered(cluster, op)
    except ClusterError as error:
        return ("error", type(error).__name__, str(error))


def _answered(cluster: FakeCluster, op: tuple[Any, ...]) -> Any:
    what = op[0]
    if what == "create":
        return cluster.create(op[1])
    if what in _WRITES:
        return _WRITES[what](cluster, _ref(*op[1:4]), op[4])
    if what == "collect":
        return cluster.api.collect_orphans()
    if what == "watch":
        return cluster.changes_since(op[1])
    if op[-1]:  # a read answered by a cache one change behind
        cluster.faults.stale_reads(1)
    if what == "get":
        return cluster.get(_ref(*op[1:4]))
    if what == "list":
        _, kind, namespace, selector, _ = op
        return cluster.list(kind[0], kind[1], namespace, SELECTORS[selector])
    if what == "list_at":
        return cluster.list_at(*op[1])
    return _blocks_listed(cluster, op[1])


def _relabel(cluster: FakeCluster, ref: ObjectRef, labels: int) -> Any:
    current = cluster.get(ref)
    current["metadata"]["labels"] = dict(LABELS[labels])
    return cluster.update(current)


_WRITES: dict[str, Callable[[FakeCluster, ObjectRef, Any], Any]] = {
    "relabel": _relabel,
    "status": lambda cluster, ref, n: cluster.update_status(ref, {"phase": f"p{n}"}, None),
    "finalize": lambda cluster, ref, on: cluster.set_finalizers(ref, ["f"] if on else [], None),
    "delete": lambda cluster, ref, uid: cluster.delete(ref, uid),
}


def _blocks_listed(cluster: FakeCluster, kind: tuple[str, str]) -> Any:
    """``list_blocks_at`` as ``list_at`` answers: the objects held and every block's members
    (each block's ``holds`` naming them, and its digest theirs), in a list's order."""
    cursor, items, blocks = cluster.list_blocks_at(*kind)
    listed = list(items)
    for block in blocks:
        held = {name for name in _names(kind) if block.holds(name)}
        members = list(block.load())
        assert {m["metadata"]["name"] for m in members} == held
        assert block.size == len(members)
        assert block.digest.total == sum(map(fingerprint, members)) % 2**64
        assert all(block.holds(name) for name in held)  # read now: the same names
        listed += members
    listed.sort(key=lambda obj: (obj["metadata"]["namespace"], obj["metadata"]["name"]))
    return cursor, listed


def _names(kind: tuple[str, str]) -> list[str]:
    return [f"{PREFIX[kind]}{n}" for n in range(6)]


def _seal(cluster: FakeCluster, oracle: FakeCluster, op: tuple[Any, ...]) -> None:
    """Seal some of the Trials of a namespace that may be sealed together: held, in no block,
    not deleting, owned by their controller only, owning nothing, under the same fields."""
    _, namespace, group, mask = op
    store = cluster.store
    owning = {uid for obj in oracle.store.all() for uid in owner_uids(obj)}
    groups: dict[frozenset[tuple[str, str]], list[Key]] = {}
    for key, obj in store.objects.items():
        meta, fields = obj["metadata"], frozenset(_INDEX.fields(obj))
        controller = {value for field, value in fields if field == OWNER}
        if (
            key[:3] == (*TRIAL, namespace)
            and key not in store.member_of
            and "deletionTimestamp" not in meta
            and meta["uid"] not in owning
            and set(owner_uids(obj)) <= controller
        ):
            groups.setdefault(fields, []).append(key)
    if not groups:
        return
    chosen = sorted(groups.values())[group % len(groups)]
    keys = [key for at, key in enumerate(chosen) if mask >> at & 1] or chosen
    for sealed in [[key] for key in keys] if op[0] == "seal each" else [keys[::-1]]:
        block = store.seal(sealed, f"sealed {len(sealed)}")
        event(f"sealed {min(len(sealed), 3)}+")
        assert block.size == len(sealed) and store.member_of[sealed[0]] == block.id


def _merge(cluster: FakeCluster, op: tuple[Any, ...]) -> None:
    """Merge some of the blocks of a namespace that share their fields, read or not."""
    _, namespace, group, mask = op
    sealed = cluster.store.sealed
    groups: dict[frozenset[tuple[str, str]], list[int]] = {}
    for block in cluster.store.every_block():
        if block.namespace == namespace:
            groups.setdefault(block.fields, []).append(block.id)
    if not groups:
        return
    chosen = sorted(sorted(ids) for ids in groups.values())[group % len(groups)]
    ids = [ident for at, ident in enumerate(chosen) if mask >> at & 1] or chosen
    unread = all(ident in sealed.unread for ident in ids)
    block = cluster.store.merge(ids, "merged")
    event(f"merged {min(len(ids), 3)}+ {'unread' if unread else 'read'}")
    assert (block.id in sealed.unread) == unread
    assert not any(ident in sealed.unread or ident in sealed.read for ident in ids)


def _blocks_agree(cluster: FakeCluster, oracle: FakeCluster, state: Path) -> None:
    """Each block's row on disk counts and sums its members (as the oracle holds them), and
    the store knows each block as it is on disk."""
    db = sqlite3.connect(state / STATE_FILE)
    try:
        rows = {row[0]: row[1:] for row in db.execute("SELECT id, size, total FROM blocks")}
        members: dict[int, list[Key]] = {}
        for block, *key in db.execute(
            "SELECT block, api_version, kind, namespace, name FROM objects WHERE block NOT NULL"
        ):
            members.setdefault(block, []).append((key[0], key[1], key[2], key[3]))
    finally:
        db.close()
    assert set(rows) == set(members)  # no block left empty, no member of a block gone
    held = {key_of(ObjectRef.of(obj)): obj for obj in oracle.store.objects.values()}
    for ident, keys in members.items():
        total = sum(fingerprint(held[key]) for key in keys) % 2**64
        assert rows[ident] == (len(keys), signed(total))
    sealed = cluster.store.sealed
    known = {b.id: (b.size, signed(b.digest.total)) for b in cluster.store.every_block()}
    assert known == rows
    for ident, keys in members.items():
        if ident in sealed.read:
            assert set(sealed.members[ident]) == set(keys)
    assert {k: b for k, b in sealed.member_of.items()} == {
        key: ident for ident, keys in members.items() if ident in sealed.read for key in keys
    }


_MEMORY = Path("/dev/shm")


@contextmanager
def _state() -> Iterator[Path]:
    """A state directory, on a memory file system where there is one: each example opens and
    closes its state several times, and each open and close waits for the disk otherwise."""
    directory = tempfile.mkdtemp(dir=_MEMORY if _MEMORY.is_dir() else None)
    try:
        yield Path(directory)
    finally:
        shutil.rmtree(directory)


def _opened(state: Path, synchronous: bool) -> tuple[FakeCluster, FakeWorld]:
    cluster, world = load(state)
    cluster.api.synchronous_gc = synchronous
    return cluster, world


@settings(max_examples=200, deadline=None)
@given(TRIALS, SEALED, st.lists(OPS, min_size=20, max_size=60), st.booleans())
def test_a_cluster_with_blocks_answers_as_one_that_never_sealed(
    trials: list[tuple[Any, ...]],
    sealing: list[tuple[Any, ...]],
    then: list[tuple[Any, ...]],
    synchronous: bool,
) -> None:
    """The oracle is a cluster on disk too, reopened with the other (a reopened store judges
    its orphans again, blocks or not), that never seals anything."""
    ops = [*HISTORY, *trials, *sealing, *then]
    with _state() as state, _state() as twin:
        (cluster, world), (oracle, other) = _opened(state, synchronous), _opened(twin, synchronous)
        try:
            for op in ops:
                if op[0] == "reopen" and cluster.store.blocks:
                    event("reopened with a block unread")
                if op[0] in ("seal", "seal each"):
                    _seal(cluster, oracle, op)
                elif op[0] == "merge":
                    _merge(cluster, op)
                elif op[0] == "reopen":
                    close(world)
                    close(other)
                    cluster, world = _opened(state, synchronous)
                    oracle, other = _opened(twin, synchronous)
                else:
                    _answered_alike(cluster, oracle, op)
                for kind in KINDS:
                    assert cluster.digest_at(*kind) == oracle.digest_at(*kind)
                _blocks_agree(cluster, oracle, state)
            _same_state(cluster, oracle)  # the blocks read now, in their places
            close(world)
            cluster, world = _opened(state, synchronous)
            _same_state(cluster, oracle)
            _same_state(read(state), oracle)  # a reader reads every member
        finally:
            close(world)
            close(other)


def _answered_alike(cluster: FakeCluster, oracle: FakeCluster, op: tuple[Any, ...]) -> None:
    unread = len(cluster.store.blocks)
    resolved = _resolved(oracle, op)
    asked = ("list_at", *op[1:]) if op[0] == "blocks" else resolved  # what blocks stand for
    expected = _answer(oracle, asked)
    assert _answer(cluster, resolved) == expected, op
    if len(cluster.store.blocks) < unread:
        event(f"{op[0]} read a block")
    elif unread:
        event(f"{op[0]} with a block unread")


def _same_state(cluster: FakeCluster, oracle: FakeCluster) -> None:
    for kind in KINDS:
        assert cluster.digest_at(*kind) == oracle.digest_at(*kind)
    assert not cluster.faults.pending and not oracle.faults.pending
    got, expected = cluster.store.to_dict(), oracle.store.to_dict()
    assert not cluster.store.blocks  # ``to_dict`` read them all
    for part in ("objects", "version", "uids", "undo"):
        assert got[part] == expected[part], part
