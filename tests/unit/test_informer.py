"""The watch-fed cache keeps list and watch consistent, even when a list is stale, and is
repaired from the API server when its watch lost an event; sealed Trials handed over as blocks
by its first list are read only when a read needs them."""

from __future__ import annotations

import pytest

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.loop.informer import Informer, block_source
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.ports import AlreadyExists, Conflict, NotFound
from tests.support.blocks import SealingCluster

REF = ObjectRef(API_VERSION, "Experiment", "ns", "e")


def experiment() -> dict[str, object]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Experiment",
        "metadata": {"name": "e", "namespace": "ns"},
    }


def test_a_relist_from_a_stale_list_replays_the_change_it_missed() -> None:
    """Found by the restart-sequence property: a controller restarted while its reads were one
    change behind listed without the newest object and, watching from *now*, never saw it."""
    cluster = FakeCluster()
    cluster.create(experiment())
    cluster.faults.stale_reads(100)  # every list of the relist is one change behind
    informer = Informer(cluster)
    cluster.faults.clear()
    assert informer.list(API_VERSION, "Experiment", None, {}) == []  # the list was stale...
    changes = informer.sync()
    assert changes is not None and [c.type for c in changes] == ["ADDED"]  # ...and is repaired
    assert informer.get(REF)["metadata"]["name"] == "e"


def test_a_fresh_list_replays_nothing() -> None:
    cluster = FakeCluster()
    cluster.create(experiment())
    informer = Informer(cluster)
    assert informer.sync() == []
    assert informer.get(REF)["metadata"]["name"] == "e"


def test_a_relist_repairs_a_lost_event_and_reports_only_what_changed() -> None:
    cluster = FakeCluster()
    cluster.create(experiment())
    cluster.create({**experiment(), "metadata": {"name": "other", "namespace": "ns"}})
    informer = Informer(cluster)
    cluster.faults.watch.lose_next(2)
    cluster.update_spec(REF, {"maxTrialCount": 7}, None)
    cluster.delete(ObjectRef(API_VERSION, "Experiment", "ns", "other"), _uid(cluster, "other"))
    assert informer.sync() == []  # both events lost: the cache is wrong and nothing says so
    assert informer.get(REF).get("spec") is None
    changes = informer.relist()
    assert [(c.type, c.object["metadata"]["name"]) for c in changes] == [
        ("DELETED", "other"),
        ("MODIFIED", "e"),
    ]
    assert informer.get(REF)["spec"] == {"maxTrialCount": 7}
    assert informer.relist() == []  # nothing differs: nothing to reconcile


def test_a_write_refused_as_stale_rereads_its_object() -> None:
    cluster = FakeCluster()
    cluster.create(experiment())
    informer = Informer(cluster)
    cluster.faults.watch.lose_next(1)
    cluster.update_spec(REF, {"maxTrialCount": 7}, None)
    informer.sync()
    held = informer.get(REF)
    with pytest.raises(Conflict):
        informer.update_status(REF, {"trials": 1}, held["metadata"]["resourceVersion"])
    assert informer.get(REF)["spec"] == {"maxTrialCount": 7}  # healed at the refused write
    with pytest.raises(AlreadyExists):
        cluster.faults.watch.lose_next(1)
        cluster.create({**experiment(), "metadata": {"name": "late", "namespace": "ns"}})
        informer.sync()
        informer.create({**experiment(), "metadata": {"name": "late", "namespace": "ns"}})
    assert informer.get(ObjectRef(API_VERSION, "Experiment", "ns", "late"))


def test_a_delete_of_an_object_already_gone_forgets_it() -> None:
    cluster = FakeCluster()
    cluster.create(experiment())
    informer = Informer(cluster)
    uid = _uid(cluster, "e")
    cluster.faults.watch.lose_next(1)
    cluster.delete(REF, uid)
    informer.sync()
    with pytest.raises(NotFound):
        informer.delete(REF, uid)
    with pytest.raises(NotFound):
        informer.get(REF)


def test_a_late_deletion_does_not_remove_a_namesake() -> None:
    cluster = FakeCluster()
    cluster.create(experiment())
    informer = Informer(cluster)
    cluster.delete(REF, _uid(cluster, "e"))
    cluster.faults.watch.reorder_next(1)  # the DELETED is held back...
    assert informer.sync() == []
    cluster.create(experiment())
    informer.relist()  # ...past a relist that found the namesake
    changes = informer.sync()
    assert [c.type for c in changes] == ["DELETED"]  # late: of the old UID
    assert informer.get(REF)["metadata"]["uid"] == _uid(cluster, "e")


def test_a_relist_reports_what_is_gone_in_name_order_whatever_order_the_cache_took_it_in() -> None:
    """Found by the informer's blocks property: a cache holds its objects in the order it took
    them in (the first list's, then the watch's, and a block's members when it is read), so a
    relist that walked it reported the deletions of a cache holding blocks in another order
    than a cache holding every object; the reconciles they wake are queued in that order."""
    cluster = FakeCluster()
    for name in ("t2", "t1"):
        cluster.create(_trial(name))
    blocked = Informer(SealingCluster(cluster, frozenset({"t2"}), 1))
    plain = Informer(cluster.for_cache())
    cluster.create(_trial("t0"))
    for informer in (blocked, plain):
        informer.sync()
        assert len(informer.list(API_VERSION, "Trial", "ns", {})) == 3  # the block read: last
    for name in ("t0", "t1", "t2"):
        cluster.delete(ObjectRef(API_VERSION, "Trial", "ns", name), "")
    for informer in (blocked, plain):
        changes = informer.relist()  # the deletions were not synced: the relist finds them
        assert [(c.type, c.object["metadata"]["name"]) for c in changes] == [
            ("DELETED", "t0"),
            ("DELETED", "t1"),
            ("DELETED", "t2"),
        ]


def _trial(name: str) -> dict[str, object]:
    meta = {"name": name, "namespace": "ns", "labels": {LABEL_EXPERIMENT: "e0"}}
    return {"apiVersion": API_VERSION, "kind": "Trial", "metadata": meta}


def _sealed_trials() -> tuple[FakeCluster, SealingCluster]:
    """Three Trials of Experiment e0 and two of e1, every one sealed: a block per Experiment."""
    cluster = FakeCluster()
    for n, experiment_name in enumerate(["e0", "e0", "e0", "e1", "e1"]):
        meta = {"name": f"t{n}", "namespace": "ns", "labels": {LABEL_EXPERIMENT: experiment_name}}
        cluster.create({"apiVersion": API_VERSION, "kind": "Trial", "metadata": meta})
    return cluster, SealingCluster(cluster, frozenset(f"t{n}" for n in range(5)), 1)


def _loads(source: SealingCluster) -> list[int]:
    """How many times the informer read each block, in the order handed over (e0's, e1's)."""
    return [source.loads[block_id] for block_id in source.members]


def test_a_first_list_holds_blocks_unread_until_a_read_needs_their_trials() -> None:
    cluster, source = _sealed_trials()
    assert block_source(source)  # the plain cluster is one too, with no block to hand
    assert cluster.store.blocks == {}
    informer = Informer(source)
    listed = informer.listed
    assert informer.list(API_VERSION, "Experiment", None, {}) == []
    assert informer.relist() == [] and informer.listed == listed  # the digests agree
    assert _loads(source) == [0, 0]
    assert informer.get(ObjectRef(API_VERSION, "Trial", "ns", "t3"))["metadata"]["name"] == "t3"
    assert _loads(source) == [0, 1]  # e1's block only
    trials = informer.list(API_VERSION, "Trial", "ns", {LABEL_EXPERIMENT: "e0"})
    assert sorted(t["metadata"]["name"] for t in trials) == ["t0", "t1", "t2"]
    assert _loads(source) == [1, 1]


def test_a_write_to_a_sealed_trial_reads_its_block_and_keeps_the_newer_version() -> None:
    cluster, source = _sealed_trials()
    informer = Informer(source)
    ref = ObjectRef(API_VERSION, "Trial", "ns", "t1")
    written = cluster.update_spec(ref, {"step": 1}, None)
    assert [c.object["metadata"]["name"] for c in informer.sync()] == ["t1"]
    assert _loads(source) == [1, 0]
    assert informer.get(ref) == written
    assert len(informer.list(API_VERSION, "Trial", None, {})) == 5
    assert informer.relist() == []


def _uid(cluster: FakeCluster, name: str) -> str:
    return str(cluster.get(ObjectRef(API_VERSION, "Experiment", "ns", name))["metadata"]["uid"])
