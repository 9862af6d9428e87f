"""``core.objects`` at its edges: cluster-scoped names, objects without a ``resourceVersion``,
two equal numbers, ``fill`` (a relist) replacing a kind's objects and their buckets, and
unread blocks: refused when malformed, read only when needed, and read from a holder whose
block changed since (fewer members, a name held already)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from katib_resume.core.katib import LABEL_EXPERIMENT
from katib_resume.core.objects import EVERY, Objects, key_of, older, version_of
from tests.support.blocks import sealed


def _pod(name: str, version: str = "1", **labels: str) -> dict[str, Any]:
    meta = {"namespace": "ns", "name": name, "resourceVersion": version, "labels": labels}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def test_a_cluster_scoped_object_is_named_without_a_namespace() -> None:
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"}}
    assert key_of(pv) == ("v1", "PersistentVolume", "", "pv")
    held = Objects()
    held.put(pv)
    assert held.get("v1", "PersistentVolume", None, "pv") is pv
    assert held.get("v1", "PersistentVolume", "", "pv") is pv


def test_no_resource_version_reads_as_empty() -> None:
    assert version_of({"kind": "List"}) == ""
    assert version_of({"metadata": {}}) == ""
    assert version_of({"metadata": {"resourceVersion": 7}}) == "7"


def test_an_equal_number_is_not_older() -> None:
    assert not older("5", "5")
    assert not older("05", "5")
    assert older("4", "5")
    assert not older("x", "5") and not older("4", "")


def test_fill_replaces_the_kinds_objects_and_their_buckets() -> None:
    held = Objects()
    held.put(_pod("gone", **{LABEL_EXPERIMENT: "e"}))
    held.put(_pod("stays", **{LABEL_EXPERIMENT: "e"}))
    held.fill("v1", "Pod", [_pod("stays", "2", **{LABEL_EXPERIMENT: "e"}), _pod("new")])
    assert sorted(n for _, n in held.table("v1", "Pod")) == ["new", "stays"]
    selected = held.select("v1", "Pod", "ns", {LABEL_EXPERIMENT: "e"})
    assert [(o["metadata"]["name"], version_of(o)) for o in selected] == [("stays", "2")]
    held.fill("v1", "Pod", [])
    assert dict(held.table("v1", "Pod")) == {}
    assert held.select("v1", "Pod", None, {LABEL_EXPERIMENT: "e"}) == []


def test_a_delta_is_a_value() -> None:
    held = Objects()
    held.put(_pod("p"))
    delta = held.changes("v1", "Pod", EVERY, "", None)
    assert delta.complete and [o["metadata"]["name"] for o in delta.changed] == ["p"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        delta.complete = False  # type: ignore[misc]


def test_only_a_controller_with_a_uid_is_an_owner() -> None:
    held = Objects()
    owner = {"apiVersion": "v1", "kind": "Trial", "name": "t"}
    for name, ref in (
        ("plain", {**owner, "uid": "u"}),
        ("nameless", {**owner, "controller": True}),
    ):
        pod = _pod(name)
        pod["metadata"]["ownerReferences"] = [ref]
        held.put(pod)
    assert held.owned("v1", "Pod", "u") == []
    assert held.owned("v1", "Pod", "None") == []


def test_a_cursor_of_a_dropped_bucket_gets_the_whole_new_one() -> None:
    held = Objects()
    held.put(_pod("p"))
    held.put(_pod("o"))  # the cursor's serial is now past the bucket's epoch
    first = held.changes("v1", "Pod", EVERY, "", None)
    same = held.changes("v1", "Pod", EVERY, "", first.cursor)
    assert (same.changed, same.removed, same.complete) == ((), (), False)
    held.pop("v1", "Pod", ("ns", "p"))
    held.pop("v1", "Pod", ("ns", "o"))
    held.put(_pod("q"))
    again = held.changes("v1", "Pod", EVERY, "", first.cursor)
    assert again.complete and [o["metadata"]["name"] for o in again.changed] == ["q"]


def test_an_empty_bucket_is_complete_once_then_unchanged() -> None:
    held = Objects()
    held.put(_pod("p"))
    empty = held.changes("v1", "Pod", "label", "none", None)
    assert (empty.changed, empty.complete) == ((), True)
    again = held.changes("v1", "Pod", "label", "none", empty.cursor)
    assert (again.changed, again.removed, again.complete) == ((), (), False)


def _trial(name: str, version: str = "1", experiment: str = "e") -> dict[str, Any]:
    meta = {"namespace": "ns", "name": name, "resourceVersion": version, "uid": f"u-{name}"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**meta, "labels": {LABEL_EXPERIMENT: experiment}},
    }


def test_a_block_of_no_object_or_held_twice_is_refused() -> None:
    held = Objects()
    block = sealed([_trial("a")], Counter())
    with pytest.raises(ValueError, match="no object's"):
        held.hold(dataclasses.replace(block, fields=frozenset({(LABEL_EXPERIMENT, "e")})))
    held.hold(block)
    with pytest.raises(ValueError, match="held already"):
        held.hold(block)
    assert held.digest("v1", "Pod") == block.digest  # the refused ones counted nothing


def test_holding_a_block_reads_nothing_and_its_digest_is_the_kinds() -> None:
    held, loads = Objects(), Counter[int]()
    held.put(_trial("hot", "5"))
    block = sealed([_trial("a"), _trial("b")], loads)
    held.hold(block)
    reference = Objects()
    for name, version in (("hot", "5"), ("a", "1"), ("b", "1")):
        reference.put(_trial(name, version))
    assert held.digest("v1", "Pod") == reference.digest("v1", "Pod")
    assert held.get("v1", "Pod", "ns", "missing") is None
    assert held.select("v1", "Pod", "other", {}) == []  # another namespace's list
    assert held.select("v1", "Pod", None, {LABEL_EXPERIMENT: "f"}) == []  # another label's
    delta = held.changes("v1", "Pod", EVERY, "", None, blocks=True)
    assert (len(delta.changed), delta.blocks) == (1, (block,))
    assert sum(loads.values()) == 0
    assert held.get("v1", "Pod", "ns", "a") is not None and loads[block.id] == 1
    assert held.digest("v1", "Pod") == reference.digest("v1", "Pod")
    assert not held.blocks  # nothing left unread


def test_a_block_read_after_a_member_left_it_answers_with_what_is_held() -> None:
    """A holder's block may answer with fewer members than it had when handed over (its store
    took a written one out): the digest is then the one of what the cache holds."""
    held, members = Objects(), [_trial("a"), _trial("b")]
    block = sealed(members, Counter())
    held.hold(dataclasses.replace(block, load=lambda: members[:1]))
    assert held.digest("v1", "Pod").size == 2
    assert [o["metadata"]["name"] for o in held.table("v1", "Pod").values()] == ["a"]
    reference = Objects()
    reference.put(members[0])
    assert held.digest("v1", "Pod") == reference.digest("v1", "Pod")


def test_a_block_handing_over_a_name_held_keeps_the_newer_version() -> None:
    held, newer_b = Objects(), _trial("b", "7")
    block = sealed([_trial("a"), _trial("b", "3")], Counter())
    held.hold(dataclasses.replace(block, holds=lambda name: name == "a"))
    held.put(newer_b)  # the block says it does not hold "b": not read
    assert held.blocks and held.get("v1", "Pod", "ns", "b") is newer_b
    assert held.get("v1", "Pod", "ns", "a") is not None  # read now
    assert held.get("v1", "Pod", "ns", "b") is newer_b
    reference = Objects()
    reference.put(_trial("a"))
    reference.put(newer_b)
    assert held.digest("v1", "Pod") == reference.digest("v1", "Pod")


def test_fill_forgets_a_kinds_blocks_unread() -> None:
    held, loads = Objects(), Counter[int]()
    held.hold(sealed([_trial("a")], loads))
    first = held.changes("v1", "Pod", EVERY, "", None, blocks=True)
    held.fill("v1", "Pod", [_trial("z")])
    assert sum(loads.values()) == 0 and not held.blocks
    assert [o["metadata"]["name"] for o in held.table("v1", "Pod").values()] == ["z"]
    again = held.changes("v1", "Pod", EVERY, "", first.cursor, blocks=True)
    assert again.complete and again.blocks == ()


def test_a_block_that_cannot_be_read_stays_held() -> None:
    held, block = Objects(), sealed([_trial("a")], Counter())

    def broken() -> list[dict[str, Any]]:
        raise OSError("the state is gone")

    held.hold(dataclasses.replace(block, load=broken))
    with pytest.raises(OSError, match="gone"):
        held.get("v1", "Pod", "ns", "a")
    assert held.blocks and held.digest("v1", "Pod") == block.digest
    delta = held.changes("v1", "Pod", EVERY, "", None, blocks=True)
    assert [b.id for b in delta.blocks] == [block.id]
