"""Blocks on disk (``adapters/fake/sealed.py``, format 7): what a writer holds unread and when it
reads a block, what a write of a member does to its block's row, the owner look-ups that reach
into unread blocks, ``seal``'s and ``merge``'s refusals, and the formats before and after."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake import FakeCluster, FakeWorld, StateFileError, load
from katib_resume.adapters.fake.lazy import DamagedObject
from katib_resume.adapters.fake.persistence import STATE_FILE, close, read
from katib_resume.adapters.fake.rows import write
from katib_resume.adapters.fake.sqlite import FORMAT, connect, signed
from katib_resume.adapters.fake.store import Key, Store
from katib_resume.app.loop.informer import Informer
from katib_resume.core.actions import ObjectRef
from katib_resume.core.digest import fingerprint
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import NotFound

NS = "ns"
EXPERIMENT = ObjectRef(API_VERSION, "Experiment", NS, "e")


def _trial(name: str, owner: Manifest | None, **labels: str) -> Manifest:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    meta["labels"] = {LABEL_EXPERIMENT: "e", **labels}
    if owner is not None:
        ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "controller": True}
        meta["ownerReferences"] = [{**ref, "name": owner["metadata"]["name"], "uid": owner["uid"]}]
    return {"apiVersion": API_VERSION, "kind": "Trial", "metadata": meta, "spec": {"n": name}}


def _ref(name: str) -> ObjectRef:
    return ObjectRef(API_VERSION, "Trial", NS, name)


def _key(name: str) -> Key:
    return (API_VERSION, "Trial", NS, name)


def _grown(state: Path, names: list[str], **labels: str) -> FakeCluster:
    """An Experiment and Trials it owns, written to ``state`` (closed); the cluster as written."""
    cluster, world = load(state)
    meta = {"name": "e", "namespace": NS}
    experiment = cluster.create({"apiVersion": API_VERSION, "kind": "Experiment", "metadata": meta})
    owner = {**experiment, "uid": experiment["metadata"]["uid"]}
    for name in names:
        cluster.create(_trial(name, owner, **labels))
    close(world)
    return cluster


def _sealed(state: Path, *groups: list[str]) -> None:
    """Each of ``groups`` (names of Trials held) sealed into a block of its own."""
    cluster, world = load(state)
    for names in groups:
        cluster.store.seal([_key(name) for name in names], f"note of {names}")
    close(world)


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[tuple[FakeCluster, FakeWorld]]:
    """A state of an Experiment and four Trials, sealed into one block, opened again."""
    _grown(tmp_path, ["t0", "t1", "t2", "t3"])
    _sealed(tmp_path, ["t0", "t1", "t2", "t3"])
    cluster, world = load(tmp_path)
    yield cluster, world
    close(world)


def _sql(state: Path, statement: str, *bound: Any) -> list[Any]:
    db = sqlite3.connect(state / STATE_FILE)
    try:
        with db:
            return db.execute(statement, bound).fetchall()
    finally:
        db.close()


def _trials(cluster: FakeCluster) -> list[Manifest]:
    return list(cluster.list(API_VERSION, "Trial", NS, {}))


def test_a_writer_holds_a_block_unread_until_a_member_is_needed(
    opened: tuple[FakeCluster, FakeWorld], tmp_path: Path
) -> None:
    cluster, _ = opened
    store = cluster.store
    [block] = store.blocks.values()
    assert block.size == 4 and block.note == "note of ['t0', 't1', 't2', 't3']"
    assert store.unsealed(API_VERSION, "Trial") == []
    assert cluster.digest_at(API_VERSION, "Trial")[1] == block.digest
    assert cluster.get(_ref("t2"))["spec"] == {"n": "t2"}  # read: the whole block
    assert not store.blocks and set(store.member_of) == {_key(f"t{n}") for n in range(4)}
    assert cluster.digest_at(API_VERSION, "Trial")[1] == block.digest
    assert _trials(cluster) == _trials(read(tmp_path))


def test_a_look_up_of_a_name_no_member_has_reads_no_block(
    opened: tuple[FakeCluster, FakeWorld],
) -> None:
    cluster, _ = opened
    with pytest.raises(NotFound):
        cluster.get(_ref("t9"))
    cluster.create(_trial("t9", None))
    assert len(cluster.store.blocks) == 1


def test_a_member_written_or_deleted_leaves_its_block_on_disk(
    opened: tuple[FakeCluster, FakeWorld], tmp_path: Path
) -> None:
    cluster, world = opened
    [block] = cluster.store.blocks.values()
    before = cluster.get(_ref("t1"))
    cluster.update_status(_ref("t1"), {"phase": "done"}, None)
    left = (3, signed((block.digest.total - fingerprint(before)) % 2**64))
    assert _sql(tmp_path, "SELECT size, total FROM blocks") == [left]
    assert _sql(tmp_path, "SELECT block, uid FROM objects WHERE name = 't1'") == [(None, None)]
    close(world)
    again, world = load(tmp_path)
    [rest] = again.store.blocks.values()
    assert rest.id == block.id and rest.size == 3
    assert [t["metadata"]["name"] for t in again.store.unsealed(API_VERSION, "Trial")] == ["t1"]
    for name in ("t0", "t2", "t3"):
        again.delete(_ref(name), "")
    assert _sql(tmp_path, "SELECT count(*) FROM blocks") == [(0,)]  # left empty: gone
    assert [t["metadata"]["name"] for t in _trials(again)] == ["t1"]
    close(world)


def test_a_block_handed_out_counts_a_member_written_since_among_its_own(
    opened: tuple[FakeCluster, FakeWorld],
) -> None:
    """A cache holding the block as ``list_blocks_at`` gave it learns of a member's write from
    the watch: ``holds`` still names it, so the cache reads the block first, and ``load`` gives
    every member as handed out (the written one at the version listed), as the block's digest
    counts them; the cache then keeps the newer version. The block as it stands on disk now
    (``every_block``) has the other members."""
    cluster, _ = opened
    _, items, [block] = cluster.list_blocks_at(API_VERSION, "Trial")
    assert items == [] and block.holds("t1") and not block.holds("t9")
    listed = cluster.get(_ref("t1"))
    cluster.update_status(_ref("t1"), {"phase": "done"}, None)
    assert block.holds("t1") and not block.holds("t9")
    members = block.load()
    assert [m["metadata"]["name"] for m in members] == ["t0", "t1", "t2", "t3"]
    assert members[1] == listed and sum(map(fingerprint, members)) % 2**64 == block.digest.total
    [now] = cluster.store.every_block()
    assert [m["metadata"]["name"] for m in now.load()] == ["t0", "t2", "t3"]
    assert now.size == 3 and not now.holds("t1") and now.holds("t2")


def test_a_cache_reads_a_block_handed_out_as_it_was_handed_out(
    opened: tuple[FakeCluster, FakeWorld],
) -> None:
    """A cache's block stands for its members as its first list found them: read after a
    member was deleted, it answers as a cache that held every member from that list, which
    learns of the deletion from the watch or a relist (a block read as stored now would drop
    the member unsaid and move the cache's digest to the server's: a relist after a lost event
    would report nothing)."""
    cluster, _ = opened
    blocked = Informer(cluster.for_cache(), [(API_VERSION, "Trial")])
    cluster.store.all()  # the store reads the block: the next first list gets every Trial
    plain = Informer(cluster.for_cache(), [(API_VERSION, "Trial")])
    assert blocked.objects.blocks and not plain.objects.blocks
    digest = plain.objects.digest(API_VERSION, "Trial")
    cluster.delete(_ref("t1"), "")  # neither cache has synced it
    for informer in (blocked, plain):
        listed = informer.list(API_VERSION, "Trial", NS, {})
        assert [t["metadata"]["name"] for t in listed] == ["t0", "t1", "t2", "t3"]
        assert informer.objects.digest(API_VERSION, "Trial") == digest
        changes = informer.relist()
        assert [(c.type, c.object["metadata"]["name"]) for c in changes] == [("DELETED", "t1")]


def test_a_new_object_owned_by_an_unread_member_is_not_collected(tmp_path: Path) -> None:
    grown = _grown(tmp_path, ["t0", "t1"])
    uid = grown.store.find(_ref("t1"))["metadata"]["uid"]  # type: ignore[index]
    _sealed(tmp_path, ["t0", "t1"])
    cluster, world = load(tmp_path)
    owner = {"apiVersion": API_VERSION, "kind": "Trial", "name": "t1", "uid": uid}
    meta = {"name": "c", "namespace": NS, "ownerReferences": [owner]}
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})
    assert cluster.api.collect_orphans() == 0
    assert cluster.get(ObjectRef("v1", "ConfigMap", NS, "c"))
    assert len(cluster.store.blocks) == 1  # a look-up of the UID, not a read
    close(world)


@pytest.mark.parametrize("synchronous", [True, False])
def test_deleting_an_owner_collects_the_members_of_its_unread_blocks(
    opened: tuple[FakeCluster, FakeWorld], synchronous: bool
) -> None:
    cluster, _ = opened
    cluster.api.synchronous_gc = synchronous
    cluster.delete(EXPERIMENT, "")
    if not synchronous:
        assert cluster.api.collect_orphans() == 4
    assert _trials(cluster) == [] and not cluster.store.blocks


def test_the_dependents_of_an_owner_include_its_unread_blocks_members(
    opened: tuple[FakeCluster, FakeWorld],
) -> None:
    cluster, _ = opened
    uid = cluster.get(EXPERIMENT)["metadata"]["uid"]
    assert cluster.store.dependents_of(uid) == [_key(f"t{n}") for n in range(4)]


def test_a_block_whose_owner_is_gone_is_read_at_the_open(tmp_path: Path) -> None:
    """Its members are the collector's suspects, as they would be held."""
    _grown(tmp_path, ["t0", "t1"])
    _sealed(tmp_path, ["t0", "t1"])
    cluster, world = load(tmp_path)
    cluster.api.synchronous_gc = False
    cluster.delete(EXPERIMENT, "")
    close(world)  # a command ended before the collector's pass
    cluster, world = load(tmp_path)
    assert not cluster.store.blocks
    assert cluster.api.collect_orphans() == 2 and _trials(cluster) == []
    close(world)


def test_a_list_reads_only_the_blocks_that_may_hold_an_answer(tmp_path: Path) -> None:
    """A block under another value of an indexed label, or in another namespace, holds none."""
    _grown(tmp_path, ["t0", "t1"])
    cluster, world = load(tmp_path)
    for name in ("u0", "u1"):
        labels = {LABEL_EXPERIMENT: "f", "x": "1"}
        cluster.create(
            _trial(name, None) | {"metadata": {"name": name, "namespace": NS, "labels": labels}}
        )
    close(world)
    _sealed(tmp_path, ["t0", "t1"], ["u0", "u1"])
    cluster, world = load(tmp_path)
    assert len(cluster.store.blocks) == 2
    assert cluster.list(API_VERSION, "Trial", "other", {}) == []
    found = cluster.list(API_VERSION, "Trial", NS, {LABEL_EXPERIMENT: "f"})
    assert [t["metadata"]["name"] for t in found] == ["u0", "u1"]
    assert len(cluster.store.blocks) == 1  # the other Experiment's is unread
    found = cluster.list(API_VERSION, "Trial", None, {"x": "1"})  # not indexed: every block
    assert [t["metadata"]["name"] for t in found] == ["u0", "u1"] and not cluster.store.blocks
    close(world)


def test_a_reader_reads_every_member(opened: tuple[FakeCluster, FakeWorld], tmp_path: Path) -> None:
    cluster, _ = opened
    reader = read(tmp_path)
    assert not reader.store.blocks and len(reader.store.unsealed(API_VERSION, "Trial")) == 4
    assert reader.store.to_dict()["objects"] == cluster.store.to_dict()["objects"]


def test_merged_unread_blocks_stay_unread_and_mixed_ones_are_read(tmp_path: Path) -> None:
    _grown(tmp_path, ["t0", "t1", "t2", "t3"])
    _sealed(tmp_path, ["t0"], ["t1"], ["t2"], ["t3"])
    cluster, world = load(tmp_path)
    store = cluster.store
    ids = sorted(store.blocks)
    merged = store.merge(ids[:2], "first two")
    assert store.blocks[merged.id] is merged and merged.size == 2 and merged.id > ids[-1]
    cluster.get(_ref("t2"))  # reads its block
    mixed = store.merge([merged.id, *ids[2:]], "all")
    assert not store.blocks and mixed.size == 4
    assert set(store.member_of.values()) == {mixed.id}
    close(world)
    cluster, world = load(tmp_path)
    [block] = cluster.store.blocks.values()
    assert (block.id, block.size, block.note) == (mixed.id, 4, "all")
    assert [m["metadata"]["name"] for m in block.load()] == ["t0", "t1", "t2", "t3"]
    close(world)


def test_a_block_merged_away_answers_no_more(opened: tuple[FakeCluster, FakeWorld]) -> None:
    cluster, _ = opened
    [block] = cluster.store.blocks.values()
    cluster.store.merge([block.id], "again")
    with pytest.raises(ValueError, match="merged"):
        block.load()
    with pytest.raises(ValueError, match="merged"):
        block.holds("t0")
    with pytest.raises(ValueError, match="no block"):
        cluster.store.merge([block.id], "gone")


def test_block_ids_are_never_used_again(opened: tuple[FakeCluster, FakeWorld]) -> None:
    cluster, _ = opened
    [block] = cluster.store.blocks.values()
    for n in range(4):
        cluster.delete(_ref(f"t{n}"), "")
    cluster.create(_trial("t9", None))
    assert cluster.store.seal([_key("t9")], "").id > block.id


REFUSED: dict[str, Callable[[FakeCluster], list[Key]]] = {
    "nothing": lambda c: [],
    "not held": lambda c: [_key("t9")],
    "two kinds": lambda c: [_key("t0"), ("v1", "ConfigMap", NS, "t0")],
    "two namespaces": lambda c: [_key("t0"), (API_VERSION, "Trial", "other", "t0")],
    "other fields": lambda c: [_key("t0"), _key("u")],
    "deleting": lambda c: [_key("d")],
    "owned otherwise": lambda c: [_key("s")],
    "owning": lambda c: [_key("t1")],
    "owning a member": lambda c: [_key("t2")],
    "a member": lambda c: [_key("t3"), _key("t0")],
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_seal_refuses_what_cannot_be_a_block_and_writes_nothing(tmp_path: Path, case: str) -> None:
    grown = _grown(tmp_path, ["t0", "t1", "t2", "t3", "d", "s"])
    cluster, world = load(tmp_path)
    owner = {**grown.get(EXPERIMENT), "uid": grown.get(EXPERIMENT)["metadata"]["uid"]}
    t1, t2 = (cluster.get(_ref(n)) for n in ("t1", "t2"))
    cluster.create(_trial("u", owner, x="1") | {"metadata": {"name": "u", "namespace": NS}})
    for kind, namespace in (("Trial", "other"), ("ConfigMap", NS)):  # t0's fields elsewhere
        twin = _trial("t0", owner) | {"kind": kind}
        twin["metadata"]["namespace"] = namespace
        cluster.create(twin | ({"apiVersion": "v1"} if kind == "ConfigMap" else {}))
    cluster.set_finalizers(_ref("d"), ["f"], None)
    cluster.delete(_ref("d"), "")
    other = {"apiVersion": "v1", "kind": "Other", "name": "x", "uid": "x"}
    s = cluster.get(_ref("s"))
    s["metadata"]["ownerReferences"].append(other)
    cluster.update(s)
    cluster.create(_trial("w", {**t1, "uid": t1["metadata"]["uid"]}))  # t1 owns a held Trial
    cluster.create(_trial("m", {**t2, "uid": t2["metadata"]["uid"]}))  # t2 owns a member
    cluster.store.seal([_key("m")], "")
    cluster.store.seal([_key("t3")], "")
    close(world)
    cluster, world = load(tmp_path)
    cluster.get(_ref("t3"))  # its block read
    blocks = _sql(tmp_path, "SELECT * FROM blocks")
    with pytest.raises(ValueError):
        cluster.store.seal(REFUSED[case](cluster), "refused")
    assert _sql(tmp_path, "SELECT * FROM blocks") == blocks
    assert _sql(tmp_path, "SELECT count(*) FROM objects WHERE block NOT NULL") == [(2,)]
    close(world)


def test_merge_refuses_blocks_of_other_fields(tmp_path: Path) -> None:
    _grown(tmp_path, ["t0"])
    cluster, world = load(tmp_path)
    cluster.create(_trial("u", None))
    a, b = (cluster.store.seal([_key(name)], "") for name in ("t0", "u"))
    with pytest.raises(ValueError, match="not of one kind"):
        cluster.store.merge([a.id, b.id], "")
    with pytest.raises(ValueError, match="not of one kind"):
        cluster.store.merge([], "")
    close(world)


def test_a_store_in_memory_seals_too() -> None:
    cluster = FakeCluster()
    for name in ("a", "b"):
        cluster.create(_trial(name, None))
    first = cluster.store.seal([_key("a")], "")
    second = cluster.store.seal([_key("b")], "")
    merged = cluster.store.merge([first.id, second.id], "both")
    assert (first.id, second.id, merged.id) == (1, 2, 3) and merged.size == 2
    assert [m["metadata"]["name"] for m in merged.load()] == ["a", "b"]
    cluster.delete(_ref("a"), "")
    assert [m["metadata"]["name"] for m in merged.load()] == ["a", "b"] and merged.holds("a")
    [now] = cluster.store.every_block()
    assert [m["metadata"]["name"] for m in now.load()] == ["b"] and not now.holds("a")
    with pytest.raises(ValueError, match="a member of a block"):
        cluster.store.seal([_key("b")], "")


def test_a_damaged_block_is_refused_when_read(tmp_path: Path) -> None:
    _grown(tmp_path, ["t0", "t1"])
    _sealed(tmp_path, ["t0", "t1"])
    _sql(tmp_path, "UPDATE blocks SET total = total + 1")
    cluster, world = load(tmp_path)
    with pytest.raises(DamagedObject, match="its record says"):
        cluster.get(_ref("t0"))
    close(world)


@pytest.mark.parametrize("head", ["{not json", "[1, 2]"])
def test_a_member_that_cannot_be_read_is_refused_when_its_block_is(
    tmp_path: Path, head: str
) -> None:
    _grown(tmp_path, ["t0", "t1"])
    _sealed(tmp_path, ["t0", "t1"])
    _sql(tmp_path, "UPDATE log SET head = ? WHERE kind = 'Trial' AND name = 't1'", head)
    cluster, world = load(tmp_path)  # the members are not read at the open
    with pytest.raises(DamagedObject, match="cannot be read"):
        cluster.get(_ref("t0"))
    close(world)


def test_a_whole_write_writes_every_member_as_an_object(
    opened: tuple[FakeCluster, FakeWorld], tmp_path: Path
) -> None:
    cluster, _ = opened
    db = connect(tmp_path / "copy.db")
    try:
        write(db, (cluster.store, [], None))
        assert db.execute("SELECT count(*) FROM blocks").fetchone() == (0,)
        blocked = db.execute("SELECT count(*) FROM objects WHERE block NOT NULL").fetchone()
        assert blocked == (0,) and db.execute("SELECT count(*) FROM objects").fetchone() == (5,)
    finally:
        db.close()


def test_a_format_6_state_is_read_as_it_is_and_upgraded_for_writing(tmp_path: Path) -> None:
    _grown(tmp_path, ["t0", "t1"])
    db = sqlite3.connect(tmp_path / STATE_FILE)
    db.executescript(
        "DROP TABLE blocks; DROP INDEX objects_by_block; DROP INDEX objects_by_uid; "
        "DROP INDEX objects_loose; ALTER TABLE objects DROP COLUMN block; "
        "ALTER TABLE objects DROP COLUMN uid; UPDATE state SET format = 6;"
    )
    db.close()
    assert [t["metadata"]["name"] for t in _trials(read(tmp_path))] == ["t0", "t1"]
    assert _sql(tmp_path, "SELECT format FROM state") == [(6,)]  # a reader changes nothing
    cluster, world = load(tmp_path)
    assert _sql(tmp_path, "SELECT format FROM state") == [(FORMAT,)] == [(8,)]
    assert not cluster.store.blocks and _sql(tmp_path, "SELECT count(*) FROM blocks") == [(0,)]
    cluster.store.seal([_key("t0"), _key("t1")], "")
    close(world)
    cluster, world = load(tmp_path)
    assert len(cluster.store.blocks) == 1 and len(_trials(cluster)) == 2
    close(world)


@pytest.mark.parametrize("form", [1, 9])
def test_a_format_this_build_cannot_read_is_refused(tmp_path: Path, form: int) -> None:
    """As a build of format 6 refuses a 7: it would read the members as objects but keep no
    block's row up to date."""
    _grown(tmp_path, ["t0"])
    _sql(tmp_path, "UPDATE state SET format = ?", form)
    for opening in (load, read):
        with pytest.raises(StateFileError, match=f"unsupported format {form}"):
            opening(tmp_path)


def test_an_empty_store_has_no_block() -> None:
    store = Store()
    assert not store.blocks and store.blocks_of(API_VERSION, "Trial") == []
