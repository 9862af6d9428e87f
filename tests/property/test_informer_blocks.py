"""An informer whose first list holds blocks agrees with one that holds every object.

Two clusters are driven alike, write for write, under the same watch faults (lost, repeated,
reordered and expired events, armed and at random rates from one seed: the faults of
``tests/property/test_relist_digests.py``). The informer of one lists every object; the
other's cluster offers ``list_blocks_at`` (``BlockSource``) and hands some of the objects named
at the start over as list-backed blocks (``tests/support/blocks.py``). After each step the two
informers read alike: each kind's digest, the objects a look-up, a list and a bucket's changes
find (a reader of blocks as blocks seeing the other's bucket in its changed objects and its
blocks' members), what a sync and a relist report, and the cursor; at each relist drawn a twin
relisting in full leaves the same cache, equal to the server's objects. Holding the blocks
reads none; a block is read at most once, and a relist reads only the blocks of the kinds
whose digests differ.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.loop.informer import Informer, block_source
from katib_resume.core.actions import ObjectRef
from katib_resume.core.blocks import Block
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.objects import EVERY, OWNER, Cursor, key_of
from katib_resume.core.ports import ClusterError, NotFound
from tests.support.blocks import SealingCluster

Kind = tuple[str, str]
KINDS: tuple[Kind, ...] = ((API_VERSION, "Trial"), (API_VERSION, "Experiment"), ("v1", "Service"))
FAULTS = {"lose": "lose_next", "repeat": "duplicate_next", "reorder": "reorder_next"}
BUCKETS = [(EVERY, ""), (LABEL_EXPERIMENT, "e0"), (LABEL_EXPERIMENT, "e1"), (OWNER, "owner-e1")]
STEP = st.tuples(
    st.sampled_from(["create", "update", "delete", "own-update", "sync", "relist", "get", *FAULTS]),
    st.sampled_from(KINDS),
    st.integers(0, 3),
)
READS = st.one_of(
    st.tuples(
        st.just("list"),
        st.sampled_from(KINDS),
        st.sampled_from([{}, {LABEL_EXPERIMENT: "e0"}, {LABEL_EXPERIMENT: "e1"}, {"x": "y"}]),
    ),
    st.tuples(st.just("changes"), st.sampled_from(KINDS), st.sampled_from(BUCKETS)),
)
OP = st.tuples(st.integers(0, 3), STEP, READS).map(  # reads by label or bucket one in four:
    lambda drawn: drawn[2] if drawn[0] == 0 else drawn[1]  # they read blocks early
)
RATES = st.tuples(st.floats(0, 0.3), st.floats(0, 0.2), st.floats(0, 0.2), st.floats(0, 0.1))


def _ref(kind: Kind, n: int) -> ObjectRef:
    return ObjectRef(kind[0], kind[1], "ns", f"o{n}")


def _write(
    cluster: FakeCluster, informer: Informer | None, op: str, ref: ObjectRef, step: int
) -> None:
    """One write: to the API server directly (a neighbour's), or the informer's own."""
    n = int(ref.name[1:])
    meta = {
        "name": ref.name,
        "namespace": "ns",
        "labels": {LABEL_EXPERIMENT: f"e{n % 2}"},
        "ownerReferences": [
            {"apiVersion": API_VERSION, "kind": "Experiment", "name": f"e{n % 2}"}
            | {"uid": f"owner-e{n % 2}", "controller": True}
        ],
    }
    body = {"apiVersion": ref.api_version, "kind": ref.kind, "spec": {"step": step}}
    try:
        if op == "create":
            cluster.api.create(body | {"metadata": meta})
        elif op == "update":
            cluster.api.update_spec(ref, {"step": step}, None)
        elif op == "delete":
            cluster.api.delete(ref, "")
        else:
            assert informer is not None
            informer.update_spec(ref, {"step": -step}, None)
    except ClusterError:
        pass  # missing, or already there: the cache may be behind too


def _said(changes: Sequence[Any]) -> list[tuple[str, Manifest]]:
    return [(c.type, c.object) for c in changes]


def _get(informer: Informer, ref: ObjectRef) -> Manifest | None:
    try:
        return informer.get(ref)
    except NotFound:
        return None


class _Readers:
    """Each bucket's readers: of the plain informer, and of the blocked one without and with
    blocks; each keeps its cursor, the objects by name and (with blocks) the blocks."""

    def __init__(self) -> None:
        self.kept: dict[
            tuple[Any, ...], tuple[Cursor | None, dict[Any, Manifest], tuple[Block, ...]]
        ] = {}

    def read(
        self, informer: Informer, key: tuple[Any, ...], blocks: bool, source: SealingCluster
    ) -> dict[Any, Manifest]:
        kind: Kind = key[1]
        bucket: tuple[str, str] = key[2]
        cursor, mirror, held = self.kept.get(key, (None, {}, ()))
        delta = informer.changes(*kind, *bucket, cursor, blocks=blocks)
        if delta.complete:
            mirror, held = {}, delta.blocks
        for name in delta.removed:
            mirror.pop(name)
        mirror.update((key_of(o)[2:], o) for o in delta.changed)
        self.kept[key] = (delta.cursor, mirror, held)
        found = [m for block in held for m in source.members[block.id]]
        assert not {key_of(m)[2:] for m in found} & mirror.keys()  # each object counted once
        return mirror | {key_of(m)[2:]: m for m in found}


def _check_relist(cluster: FakeCluster, informer: Informer, plain: Informer) -> None:
    twin = copy.deepcopy(informer, {id(informer.inner): informer.inner})
    inner = informer.inner
    assert isinstance(inner, SealingCluster)
    differ = {k for k in KINDS if inner.digest_at(*k)[1] != informer.objects.digest(*k)}
    unread = {
        b.id: b
        for by_ns in informer.objects.blocks.values()
        for ids in by_ns.values()
        for b in ids.values()
    }
    said = informer.relist()
    assert _said(said) == _said(plain.relist())
    for block_id, block in unread.items():
        assert inner.loads[block_id] == 0 or (block.api_version, block.kind) in differ
    loads = Counter(inner.loads)
    assert _said(said) == _said(twin.relist(full=True))
    inner.loads = loads  # the twin's reads of the same blocks are not the informer's
    assert informer.cursor == twin.cursor == plain.cursor
    for kind in KINDS:
        held, stored = informer.objects.table(*kind), cluster.store.of_kind(*kind)
        assert dict(held) == dict(twin.objects.table(*kind)) == {key_of(o)[2:]: o for o in stored}
        assert informer.objects.digest(*kind) == cluster.store.digest(*kind)


class _Worlds:
    """The two clusters and their informers, driven alike."""

    def __init__(self, made: list[tuple[Kind, int, bool]], sealed: frozenset[int], parts: int):
        self.plain_cluster, self.blocked_cluster = FakeCluster(), FakeCluster()
        for cluster in self.clusters():
            for step, (kind, n, update) in enumerate(made):  # the history the first list finds
                _write(cluster, None, "create", _ref(kind, n), step)
                if update:
                    _write(cluster, None, "update", _ref(kind, n), step)
        names = frozenset(f"o{n}" for n in sealed)
        self.source = SealingCluster(self.blocked_cluster, names, parts)
        self.plain = Informer(self.plain_cluster.for_cache(), KINDS)
        self.blocked = Informer(self.source, KINDS)
        self.readers = _Readers()

    def clusters(self) -> tuple[FakeCluster, FakeCluster]:
        return self.plain_cluster, self.blocked_cluster

    def step(self, step: int, op: tuple[Any, ...]) -> None:
        plain, blocked = self.plain, self.blocked
        if op[0] in FAULTS:
            for cluster in self.clusters():
                getattr(cluster.faults.watch, FAULTS[op[0]])(op[2])
        elif op[0] == "sync":
            assert _said(blocked.sync()) == _said(plain.sync())
        elif op[0] == "relist":
            _check_relist(self.blocked_cluster, blocked, plain)
        elif op[0] == "get":
            assert _get(blocked, _ref(op[1], op[2])) == _get(plain, _ref(op[1], op[2]))
        elif op[0] == "list":
            kind: Kind = op[1]
            mine, theirs = blocked.list(*kind, "ns", op[2]), plain.list(*kind, "ns", op[2])
            assert sorted(map(key_of, mine)) == sorted(map(key_of, theirs))
            assert {key_of(o): o for o in mine} == {key_of(o): o for o in theirs}
        elif op[0] == "changes":
            expected = self.readers.read(plain, ("plain", *op[1:]), False, self.source)
            loads = sum(self.source.loads.values())
            assert self.readers.read(blocked, ("blocks", *op[1:]), True, self.source) == expected
            assert sum(self.source.loads.values()) == loads  # blocks taken as blocks: unread
            assert self.readers.read(blocked, ("read", *op[1:]), False, self.source) == expected
        else:
            for cluster, informer in zip(self.clusters(), (plain, blocked), strict=True):
                _write(cluster, informer, op[0], _ref(op[1], op[2]), step)
        assert blocked.cursor == plain.cursor
        for kind in KINDS:
            assert blocked.objects.digest(*kind) == plain.objects.digest(*kind)
        assert all(n <= 1 for n in self.source.loads.values())


START = st.tuples(
    st.lists(
        st.tuples(st.sampled_from(KINDS), st.integers(0, 3), st.booleans()), min_size=4, max_size=12
    ),
    st.frozensets(st.integers(0, 3), min_size=2),  # the names sealed
    st.integers(1, 2),  # the blocks a group is cut in
)


@settings(max_examples=400)
@given(START, st.lists(OP, min_size=5, max_size=40), RATES, st.integers(0, 2**16))
def test_an_informer_holding_blocks_agrees_with_one_holding_every_object(
    start: tuple[list[tuple[Kind, int, bool]], frozenset[int], int],
    ops: list[tuple[Any, ...]],
    rates: tuple[float, float, float, float],
    seed: int,
) -> None:
    worlds = _Worlds(*start)
    assert block_source(worlds.source)  # the plain cluster is one too, with no block to hand
    assert worlds.plain_cluster.store.blocks == {}
    assert sum(worlds.source.loads.values()) == 0  # holding reads nothing
    held = worlds.blocked.objects.blocks
    assert {i for by_ns in held.values() for ids in by_ns.values() for i in ids} == set(
        worlds.source.members
    )
    handed = [m for found in worlds.source.members.values() for m in found]
    stored = worlds.blocked_cluster.store.all()
    assert sorted(map(key_of, handed)) == sorted(
        key_of(o) for o in stored if o["metadata"]["name"] in worlds.source.sealed
    )
    loss, duplication, reordering, expiry = rates
    for cluster in worlds.clusters():
        cluster.faults.watch.at_random(
            loss=loss, duplication=duplication, reordering=reordering, expiry=expiry, seed=seed
        )
    for step, op in enumerate(ops):
        worlds.step(step, op)
    _check_relist(worlds.blocked_cluster, worlds.blocked, worlds.plain)
