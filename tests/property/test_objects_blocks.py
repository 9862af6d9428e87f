"""``core.objects.Objects`` holding unread blocks answers as one holding their members.

Two caches start from the same first list: the reference holds every object, the other holds
some of them as blocks (``Objects.hold``, list-backed blocks: ``tests/support/blocks.py``). Any
sequence of writes, fills (relists), further seals and reads follows, applied to both; after
each step every read (``get``, ``select`` with and without indexed labels, ``owned``,
``table``) and every kind's digest answer alike, and each bucket's readers agree: a reader that
takes blocks as blocks (``changes(..., blocks=True)``) sees, in its changed objects plus its
blocks' members, the reference's bucket; one that does not (``blocks=False``) sees it too; a
delta is complete in the blocked cache whenever it is in the reference (and otherwise only
after a block under the bucket was held, read or forgotten), and two incremental deltas name
the same changes. Every block is read at most once, and only by an answer that needs one of its
members (by its name, or a selection, bucket or table it is under); a digest, a reader of
blocks as blocks and a fill read none.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.core.blocks import Block
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.objects import EVERY, OWNER, Cursor, Delta, Name, Objects, key_of
from tests.support.blocks import sealed_groups

Kind = tuple[str, str]
KINDS: list[Kind] = [("v1", "Pod"), (API_VERSION, "Trial")]
NAMESPACES = ["a", "b"]
NAMES = ["x", "y", "z"]
BUCKETS = [(EVERY, ""), (LABEL_EXPERIMENT, "p"), (LABEL_EXPERIMENT, "q"), (OWNER, "u-p")]
SELECTORS: list[dict[str, str]] = [
    {},
    {LABEL_EXPERIMENT: "p"},
    {LABEL_EXPERIMENT: "q"},
    {LABEL_EXPERIMENT: "none"},
    {"l": "a"},
    {LABEL_EXPERIMENT: "p", "l": "a"},
]


def _obj(
    kind: Kind, namespace: str, name: str, *, version: int, experiment: str, other: str
) -> Any:
    """An object under an experiment label and owner (``experiment`` "": neither)."""
    meta: dict[str, Any] = {
        "namespace": namespace,
        "name": name,
        "uid": f"uid-{name}",
        "resourceVersion": str(version),
        "labels": {"l": other},
    }
    if experiment:
        meta["labels"][LABEL_EXPERIMENT] = experiment
        meta["ownerReferences"] = [{"controller": True, "uid": f"u-{experiment}"}]
    return {"apiVersion": kind[0], "kind": kind[1], "metadata": meta}


def _objects(names: list[str]) -> st.SearchStrategy[Any]:
    return st.builds(
        _obj,
        st.sampled_from(KINDS),
        st.sampled_from(NAMESPACES),
        st.sampled_from(names),
        version=st.integers(1, 9),
        experiment=st.sampled_from(["p", "q", ""]),
        other=st.sampled_from(["a", "b"]),
    )


objects = _objects([*NAMES, "s"])  # "s": never listed, so sealed later or written anew
listing = st.lists(
    st.tuples(_objects(NAMES), st.booleans()), unique_by=lambda o: key_of(o[0]), max_size=16
)
name = st.tuples(st.sampled_from(KINDS), st.sampled_from(NAMESPACES), st.sampled_from(NAMES))
known = st.tuples(  # a write or look-up of a name held or sealed (most often a member)
    st.just("known"),
    st.sampled_from(["keep", "put", "discard", "get"]),
    st.integers(0, 15),
    st.integers(1, 9),
    st.sampled_from(["p", "q", ""]),
)
writes = st.tuples(st.sampled_from(["keep", "put", "discard"]), objects)
gets = st.tuples(st.just("get"), name)
reads = st.tuples(
    st.just("changes"), st.sampled_from(KINDS), st.sampled_from(BUCKETS), st.booleans()
)
steps = st.lists(
    st.one_of(
        writes,
        known,
        known,
        gets,
        reads,
        reads,
        st.tuples(
            st.just("select"),
            st.sampled_from(KINDS),
            st.sampled_from([None, *NAMESPACES]),
            st.sampled_from(SELECTORS),
        ),
        st.tuples(st.just("owned"), st.sampled_from(KINDS), st.sampled_from(["u-p", "u-q"])),
        st.tuples(st.just("table"), st.sampled_from(KINDS)),
        st.tuples(st.just("fill"), st.sampled_from(KINDS), st.lists(objects, max_size=4)),
        st.tuples(st.just("seal"), st.lists(objects, max_size=6), st.integers(1, 2)),
    ),
    max_size=30,
)


@dataclass
class _Reader:
    """What a reader of one bucket kept: its cursor, the objects by name, the blocks."""

    cursor: Cursor | None = None
    mirror: dict[Name, Manifest] = field(default_factory=dict)
    blocks: tuple[Block, ...] = ()
    renewals: int = 0
    """How many times a block was held, read or forgotten under the bucket when it last read."""

    def take(self, delta: Delta) -> None:
        if delta.complete:
            self.mirror, self.blocks = {}, delta.blocks
        assert not delta.blocks or delta.complete  # an unread block never changes
        for gone in delta.removed:
            self.mirror.pop(gone)
        self.mirror.update((key_of(o)[2:], o) for o in delta.changed)
        self.cursor = delta.cursor

    def view(self, members_of: dict[int, list[Manifest]]) -> dict[Name, int]:
        members = [m for block in self.blocks for m in members_of[block.id]]
        seen = {key_of(o)[2:]: id(o) for o in [*self.mirror.values(), *members]}
        assert len(seen) == len(self.mirror) + len(members)  # each object counted once
        return seen


@dataclass
class _Pair:
    """The reference cache and the blocked one, driven alike."""

    reference: Objects = field(default_factory=Objects)
    blocked: Objects = field(default_factory=Objects)
    loads: Counter[int] = field(default_factory=Counter)
    blocks: dict[int, Block] = field(default_factory=dict)
    members: dict[int, list[Manifest]] = field(default_factory=dict)
    readers: dict[tuple[Any, ...], tuple[_Reader, _Reader]] = field(default_factory=dict)
    renewals: Counter[tuple[Kind, str, str]] = field(default_factory=Counter)
    """How many times a block was held, read or forgotten under each bucket."""

    def seal(self, found: list[Manifest], parts: int) -> None:
        """Hold ``found`` as blocks in the blocked cache, put them in the reference."""
        for block in sealed_groups(found, self.loads, parts):
            self.blocks[block.id] = block
            self.members[block.id] = list(block.load())
            self.loads[block.id] -= 1  # the test's own look, not the cache's
            self.blocked.hold(block)
            self.renew(block)
            for member in self.members[block.id]:
                self.reference.put(member)

    def resolve(self, step: tuple[Any, ...]) -> tuple[Any, ...]:
        """A ``known`` step as the write or look-up of a name the test made."""
        if step[0] != "known":
            return step
        _, op, at, version, experiment = step
        names = sorted({key_of(m) for ms in self.members.values() for m in ms})
        if not names:
            return ("get", (KINDS[0], NAMESPACES[0], NAMES[0]))
        api_version, kind, namespace, name = names[at % len(names)]
        if op == "get":
            return ("get", ((api_version, kind), namespace, name))
        obj = _obj(
            (api_version, kind), namespace, name, version=version, experiment=experiment, other="a"
        )
        return (op, obj)

    def renew(self, block: Block) -> None:
        kind = (block.api_version, block.kind)
        self.renewals.update((kind, f, v) for f, v in block.fields)

    def unread(self) -> set[int]:
        return {i for by_ns in self.blocked.blocks.values() for ids in by_ns.values() for i in ids}

    def read(self, kind: Kind, bucket: tuple[str, str], blocks: bool) -> None:
        """Both caches' readers of a bucket ask for its changes and must agree."""
        mine, theirs = self.readers.setdefault((kind, bucket, blocks), (_Reader(), _Reader()))
        for block in self.under(kind, bucket) if not blocks else ():
            self.renew(block)  # read by this very call
        renewals = self.renewals[(kind, *bucket)]
        renewed = renewals > mine.renewals and mine.cursor is not None
        delta = self.blocked.changes(*kind, *bucket, mine.cursor, blocks=blocks)
        expected = self.reference.changes(*kind, *bucket, theirs.cursor)
        mine.renewals = renewals
        mine.take(delta)
        theirs.take(expected)
        assert expected.blocks == ()
        assert blocks or delta.blocks == ()
        if expected.complete:
            assert delta.complete
        elif delta.complete:
            assert renewed  # only a block held, read or forgotten under it renews a bucket
        else:
            assert _named(delta.changed) == _named(expected.changed)
            assert set(delta.removed) == set(expected.removed)
        assert (
            mine.view(self.members)
            == theirs.view(self.members)
            == _named(self.reference.index.bucket(kind, *bucket))
        )

    def under(self, kind: Kind, bucket: tuple[str, str]) -> list[Block]:
        """The unread blocks under a bucket."""
        blocks = [self.blocks[block_id] for block_id in self.unread()]
        return [b for b in blocks if (b.api_version, b.kind) == kind and bucket in b.fields]


def _named(objs: Any) -> dict[Name, int]:
    if isinstance(objs, dict):
        return {name: id(o) for name, o in objs.items()}
    return {key_of(o)[2:]: id(o) for o in objs}


def _keys(objs: list[Manifest]) -> list[tuple[tuple[str, ...], int]]:
    return sorted((key_of(o), id(o)) for o in objs)


def _needed(step: tuple[Any, ...], block: Block) -> bool:
    """Whether ``step``'s answer needs a member of ``block`` (the rules of ``Objects``)."""
    kind, op = (block.api_version, block.kind), step[0]
    if op in ("keep", "put", "discard"):
        key = key_of(step[1])
        return key[:3] == (*kind, block.namespace) and block.holds(key[3])
    if op == "get":
        (of, namespace, name) = step[1]
        return of == kind and namespace == block.namespace and block.holds(name)
    if op == "select":
        _, of, namespace, labels = step
        indexed = (
            {(LABEL_EXPERIMENT, labels[LABEL_EXPERIMENT])} if LABEL_EXPERIMENT in labels else set()
        )
        return of == kind and namespace in (None, block.namespace) and indexed <= block.fields
    if op == "owned":
        return bool(step[1] == kind and (OWNER, step[2]) in block.fields)
    if op == "changes":
        return bool(step[1] == kind and step[2] in block.fields and not step[3])
    return bool(op == "table" and step[1] == kind)


def _step(pair: _Pair, step: tuple[Any, ...]) -> None:
    reference, blocked = pair.reference, pair.blocked
    op = step[0]
    kind: Kind
    namespace: str | None
    if op in ("keep", "put", "discard"):
        assert getattr(blocked, op)(step[1]) == getattr(reference, op)(step[1])
    elif op == "get":
        (kind, namespace, name) = step[1]
        assert blocked.get(*kind, namespace, name) is reference.get(*kind, namespace, name)
    elif op == "select":
        _, kind, namespace, labels = step
        expected = reference.select(*kind, namespace, labels)
        assert _keys(blocked.select(*kind, namespace, labels)) == _keys(expected)
    elif op == "owned":
        _, kind, uid = step
        assert _keys(blocked.owned(*kind, uid)) == _keys(reference.owned(*kind, uid))
    elif op == "changes":
        pair.read(step[1], step[2], step[3])
    elif op == "table":
        assert _named(dict(blocked.table(*step[1]))) == _named(dict(reference.table(*step[1])))
    elif op == "fill":
        _, kind, found = step
        items = [{**o, "apiVersion": kind[0], "kind": kind[1]} for o in found]
        items = list({key_of(o): o for o in items}.values())
        for block in pair.under(kind, (EVERY, "")):
            pair.renew(block)  # forgotten unread
        blocked.fill(*kind, items)
        reference.fill(*kind, items)
    else:
        _, found, parts = step
        fresh = {key_of(o): o for o in found if reference.get(*key_of(o)) is None}
        pair.seal(list(fresh.values()), parts)


@settings(max_examples=500)
@given(listing, st.integers(1, 3), steps)
def test_blocks_answer_as_their_members_held(
    listed: list[tuple[Manifest, bool]], parts: int, history: list[tuple[Any, ...]]
) -> None:
    pair = _Pair()
    for kind in KINDS:
        of_kind = [(o, s) for o, s in listed if (o["apiVersion"], o["kind"]) == kind]
        pair.reference.fill(*kind, [o for o, _ in of_kind])
        pair.blocked.fill(*kind, [o for o, s in of_kind if not s])
    pair.seal([o for o, s in listed if s], parts)
    for drawn in history:
        step = pair.resolve(drawn)
        unread = pair.unread()
        loaded = Counter(pair.loads)
        _step(pair, step)
        for block_id in unread - pair.unread():
            block = pair.blocks[block_id]
            if step[0] != "fill":  # which forgets a kind's blocks unread
                assert pair.loads[block_id] == loaded[block_id] + 1  # read once
                assert _needed(step, block), (step, block.id)
                if step[0] != "changes":  # which counted its own reads
                    pair.renew(block)
        assert all(n <= 1 for n in pair.loads.values())
        assert all(pair.loads[b] == 0 for b in pair.unread())
        unread = pair.unread()
        for kind in KINDS:
            assert pair.blocked.digest(*kind) == pair.reference.digest(*kind)
            for bucket in BUCKETS:  # every reader of blocks as blocks, which reads none
                pair.read(kind, bucket, True)
        assert pair.unread() == unread
    for kind in KINDS:  # read everything: the same objects, the same buckets
        assert _named(dict(pair.blocked.table(*kind))) == _named(dict(pair.reference.table(*kind)))
        for bucket in BUCKETS:
            mine = pair.blocked.index.bucket(kind, *bucket)
            assert _named(dict(mine)) == _named(dict(pair.reference.index.bucket(kind, *bucket)))
    assert pair.unread() == set() and pair.blocked.blocks == {}
