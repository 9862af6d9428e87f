"""The fake cluster's API semantics, faults and watch: what makes it an honest Kubernetes.

Each test states one rule of the Kubernetes API (or one injected fault) that a controller relies
on; the volume controllers and kubelet are in ``test_fake_world.py``, persistence in
``test_fake_persistence.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from katib_resume.adapters.fake import ControllerCrash, FakeCluster, FakeWorld, Invalid
from katib_resume.adapters.fake.watch import WatchLog
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import (
    AlreadyExists,
    ClusterError,
    Conflict,
    Gone,
    NotFound,
    Unavailable,
)

SUGGESTION = ObjectRef("kubeflow.org/v1beta1", "Suggestion", "ns", "s")


def obj(kind: str = "Suggestion", name: str = "s", **extra: Any) -> Manifest:
    api = {"Deployment": "apps/v1", "PersistentVolume": "v1", "ConfigMap": "v1"}
    meta: Manifest = {"name": name, "namespace": "ns", **extra.pop("metadata", {})}
    return {
        "apiVersion": api.get(kind, SUGGESTION.api_version),
        "kind": kind,
        "metadata": meta,
        **extra,
    }


def owned_by(owner: Manifest, kind: str, name: str) -> Manifest:
    ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"]}
    ref.update(name=owner["metadata"]["name"], uid=owner["metadata"]["uid"], controller=True)
    return obj(kind, name, metadata={"ownerReferences": [ref]})


def exists(cluster: FakeCluster, ref: ObjectRef) -> bool:
    try:
        cluster.get(ref)
    except NotFound:
        return False
    return True


# -- objects, versions, generation ------------------------------------------------------------


def test_create_fills_bookkeeping_drops_status_and_refuses_a_second_one() -> None:
    cluster = FakeCluster()
    created = cluster.create({**obj(spec={"a": 1}), "status": {"x": 1}})
    meta = created["metadata"]
    assert meta["uid"] and meta["resourceVersion"] and meta["generation"] == 1
    assert meta["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert "status" not in created
    with pytest.raises(AlreadyExists):
        cluster.create(obj())


def test_get_of_a_missing_object_is_not_found_and_answers_are_copies() -> None:
    cluster = FakeCluster()
    with pytest.raises(NotFound):
        cluster.get(SUGGESTION)
    cluster.create(obj())
    cluster.get(SUGGESTION)["metadata"]["name"] = "mutated"
    assert cluster.get(SUGGESTION)["metadata"]["name"] == "s"


def test_every_write_with_a_stale_resource_version_is_a_conflict() -> None:
    cluster = FakeCluster()
    stale = cluster.create(obj())["metadata"]["resourceVersion"]
    cluster.update_status(SUGGESTION, {"phase": "a"}, stale)
    with pytest.raises(Conflict):
        cluster.update_status(SUGGESTION, {"phase": "b"}, stale)
    with pytest.raises(Conflict):
        cluster.update_spec(SUGGESTION, {"x": 1}, stale)
    with pytest.raises(Conflict):
        cluster.set_finalizers(SUGGESTION, ["f"], stale)
    with pytest.raises(Conflict):
        cluster.update({**obj(), "metadata": {**obj()["metadata"], "resourceVersion": stale}})
    cluster.update_status(SUGGESTION, {"phase": "c"}, None)  # unconditional
    assert cluster.get(SUGGESTION)["status"] == {"phase": "c"}


def test_writes_to_a_missing_object_are_not_found() -> None:
    cluster = FakeCluster()
    with pytest.raises(NotFound):
        cluster.update_spec(SUGGESTION, {}, None)
    with pytest.raises(NotFound):
        cluster.update_status(SUGGESTION, {}, None)
    with pytest.raises(NotFound):
        cluster.delete(SUGGESTION, "")


def test_generation_moves_on_spec_changes_only() -> None:
    cluster = FakeCluster()
    cluster.create(obj(spec={"max": 3}))
    assert cluster.update_spec(SUGGESTION, {"max": 3}, None)["metadata"]["generation"] == 1
    assert cluster.update_status(SUGGESTION, {"p": 1}, None)["metadata"]["generation"] == 1
    labelled = {**obj(metadata={"labels": {"a": "b"}}), "spec": {"max": 3}}
    assert cluster.update(labelled)["metadata"]["generation"] == 1
    assert cluster.update_spec(SUGGESTION, {"max": 4}, None)["metadata"]["generation"] == 2
    assert cluster.update({**labelled, "spec": {"max": 5}})["metadata"]["generation"] == 3


def test_spec_and_status_are_written_separately() -> None:
    cluster = FakeCluster()
    cluster.create(obj(spec={"max": 3}))
    cluster.update_status(SUGGESTION, {"phase": "Running"}, None)
    cluster.update_spec(SUGGESTION, {"max": 4}, None)
    cluster.update({**obj(spec={"max": 4}), "status": {"phase": "ignored"}})
    got = cluster.get(SUGGESTION)
    assert got["status"] == {"phase": "Running"} and got["spec"] == {"max": 4}
    cluster.update_status(SUGGESTION, {"phase": "Done"}, None)
    assert cluster.get(SUGGESTION)["spec"] == {"max": 4}


def test_a_write_that_changes_nothing_keeps_the_resource_version() -> None:
    cluster = FakeCluster()
    cluster.create(obj())
    first = cluster.update_status(SUGGESTION, {"p": 1}, None)["metadata"]["resourceVersion"]
    cursor = cluster.cursor
    again = cluster.update_status(SUGGESTION, {"p": 1}, first)["metadata"]["resourceVersion"]
    assert again == first and cluster.changes_since(cursor) == (cursor, [])


def test_list_filters_by_kind_namespace_and_equality_labels() -> None:
    cluster = FakeCluster()
    cluster.create(obj(name="b", metadata={"labels": {"app": "x"}}))
    cluster.create(obj(name="a", metadata={"labels": {"app": "x", "tier": "1"}}))
    cluster.create(obj(name="c", metadata={"namespace": "other", "labels": {"app": "x"}}))
    cluster.create(obj("Deployment", "a", metadata={"labels": {"app": "x"}}))
    names = [
        o["metadata"]["name"]
        for o in cluster.list(SUGGESTION.api_version, "Suggestion", "ns", {"app": "x"})
    ]
    assert names == ["a", "b"]
    assert len(cluster.list(SUGGESTION.api_version, "Suggestion", None, {"app": "x"})) == 3
    assert len(cluster.list(SUGGESTION.api_version, "Suggestion", None, {"tier": "1"})) == 1


def test_volume_kinds_are_defaulted_and_a_claim_needs_a_storage_request() -> None:
    cluster = FakeCluster()
    pv = cluster.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "v", "namespace": "x"},
            "spec": {},
        }
    )
    assert pv["status"] == {"phase": "Pending"} and "namespace" not in pv["metadata"]
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"}}
    with pytest.raises(Invalid, match="storage"):
        cluster.create({**claim, "spec": {"accessModes": ["ReadWriteOnce"]}})
    spec = {"resources": {"requests": {"storage": "1Gi"}}}
    assert cluster.create({**claim, "spec": spec})["status"] == {"phase": "Pending"}


# -- deletion, finalizers, garbage collection -------------------------------------------------


def test_delete_has_a_uid_precondition_that_protects_a_newer_object() -> None:
    cluster = FakeCluster()
    old_uid = cluster.create(obj())["metadata"]["uid"]
    with pytest.raises(Conflict):
        cluster.delete(SUGGESTION, "another-uid")
    cluster.delete(SUGGESTION, old_uid)
    new_uid = cluster.create(obj())["metadata"]["uid"]
    with pytest.raises(Conflict):
        cluster.delete(SUGGESTION, old_uid)
    assert cluster.get(SUGGESTION)["metadata"]["uid"] == new_uid
    with pytest.raises(NotFound):
        cluster.delete(ObjectRef("v1", "ConfigMap", "ns", "none"), "")


def test_finalizers_hold_a_deleted_object_until_the_last_one_goes() -> None:
    cluster = FakeCluster()
    created = cluster.create(obj(metadata={"finalizers": ["a", "b"]}))
    cluster.clock.advance(5)
    cluster.delete(SUGGESTION, created["metadata"]["uid"])
    terminating = cluster.get(SUGGESTION)
    assert terminating["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:05Z"
    cluster.clock.advance(5)
    cluster.delete(SUGGESTION, "")  # deleting again changes nothing
    assert cluster.get(SUGGESTION)["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:05Z"
    with pytest.raises(Invalid, match="no new finalizers"):
        cluster.set_finalizers(SUGGESTION, ["a", "b", "c"], None)
    cluster.set_finalizers(SUGGESTION, ["b"], None)
    assert exists(cluster, SUGGESTION)
    cluster.set_finalizers(SUGGESTION, [], None)
    assert not exists(cluster, SUGGESTION)


def test_gc_collects_namespaced_dependents_but_never_a_pv_with_an_owner_reference() -> None:
    cluster = FakeCluster()
    owner = cluster.create(obj())
    cluster.create(owned_by(owner, "Deployment", "d"))
    pv = owned_by(owner, "PersistentVolume", "pv")
    cluster.create(pv)
    cluster.delete(SUGGESTION, owner["metadata"]["uid"])
    assert not exists(cluster, ObjectRef("apps/v1", "Deployment", "ns", "d"))
    assert exists(cluster, ObjectRef("v1", "PersistentVolume", None, "pv"))


def test_gc_waits_for_every_owner_and_respects_a_dependents_finalizers() -> None:
    cluster = FakeCluster()
    first = cluster.create(obj(name="one"))
    second = cluster.create(obj(name="two"))
    both = owned_by(first, "Deployment", "d")
    both["metadata"]["ownerReferences"] += owned_by(second, "X", "_")["metadata"]["ownerReferences"]
    both["metadata"]["finalizers"] = ["keep"]
    cluster.create(both)
    deployment = ObjectRef("apps/v1", "Deployment", "ns", "d")
    cluster.delete(ObjectRef.of(first), "")
    assert "deletionTimestamp" not in cluster.get(deployment)["metadata"]
    cluster.delete(ObjectRef.of(second), "")
    assert "deletionTimestamp" in cluster.get(deployment)["metadata"]
    cluster.set_finalizers(deployment, [], None)
    assert not exists(cluster, deployment)


# -- faults -----------------------------------------------------------------------------------


def test_conflict_next_write_fails_one_write_without_applying_it() -> None:
    cluster = FakeCluster()
    cluster.faults.conflict_next_write()
    with pytest.raises(Conflict):
        cluster.create(obj())
    assert not exists(cluster, SUGGESTION)
    cluster.create(obj())


def test_fail_next_writes_fails_n_writes_of_any_kind_without_applying_them() -> None:
    cluster = FakeCluster()
    uid = cluster.create(obj())["metadata"]["uid"]
    cluster.faults.fail_next_writes(3)
    with pytest.raises(Unavailable):
        cluster.update_status(SUGGESTION, {"p": 1}, None)
    with pytest.raises(Unavailable):
        cluster.set_finalizers(SUGGESTION, ["f"], None)
    with pytest.raises(Unavailable):
        cluster.delete(SUGGESTION, uid)
    assert cluster.get(SUGGESTION)["metadata"].get("finalizers") is None
    assert "status" not in cluster.get(SUGGESTION)
    cluster.delete(SUGGESTION, uid)
    assert not exists(cluster, SUGGESTION)


def test_a_lost_response_hides_a_write_that_was_applied() -> None:
    cluster = FakeCluster()
    cluster.create(obj())
    cluster.faults.lose_next_response()
    with pytest.raises(Unavailable, match="WAS applied"):
        cluster.update_spec(SUGGESTION, {"max": 9}, None)
    assert cluster.get(SUGGESTION)["spec"] == {"max": 9}
    cluster.update_spec(SUGGESTION, {"max": 10}, None)  # one response only


def test_stale_reads_answer_from_a_cache_one_change_behind() -> None:
    cluster = FakeCluster()
    before = cluster.create(obj())
    cluster.update_status(SUGGESTION, {"p": 1}, None)
    cluster.faults.stale_reads(2)
    stale = cluster.get(SUGGESTION)
    assert stale == before
    with pytest.raises(Conflict):  # a write based on the stale read loses the race
        cluster.update_status(SUGGESTION, {"p": 2}, stale["metadata"]["resourceVersion"])
    assert "status" not in cluster.get(SUGGESTION)  # the second stale read
    assert cluster.get(SUGGESTION)["status"] == {"p": 1}  # fresh again
    cluster.create(obj(name="new"))
    cluster.faults.stale_reads(2)
    assert [
        o["metadata"]["name"] for o in cluster.list(SUGGESTION.api_version, "Suggestion", None, {})
    ] == ["s"]
    with pytest.raises(NotFound):
        cluster.get(ObjectRef.of(obj(name="new")))


def test_crash_after_writes_kills_the_controller_after_the_kth_applied_write() -> None:
    cluster = FakeCluster()
    cluster.faults.crash_after_writes(2)
    cluster.create(obj())
    with pytest.raises(ControllerCrash) as crash:
        cluster.update_status(SUGGESTION, {"p": 1}, None)
    assert not isinstance(crash.value, ClusterError)
    assert cluster.get(SUGGESTION)["status"] == {"p": 1}
    cluster.update_status(SUGGESTION, {"p": 2}, None)  # the crash happened once


def test_clear_cancels_every_pending_fault() -> None:
    cluster = FakeCluster()
    faults = cluster.faults
    faults.conflict_next_write()
    faults.fail_next_writes(2)
    faults.lose_next_response()
    faults.stale_reads(3)
    faults.crash_after_writes(1)
    assert faults.pending
    faults.clear()
    assert not faults.pending
    cluster.create(obj())
    assert exists(cluster, SUGGESTION)


def test_faults_never_hit_kubernetes_own_controllers(tmp_path: Any) -> None:
    cluster = FakeCluster()
    world = FakeWorld(cluster, tmp_path)
    cluster.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"resources": {"requests": {"storage": "1Gi"}}},
        }
    )
    cluster.faults.fail_next_writes(100)
    cluster.faults.crash_after_writes(1)
    world.tick()
    assert (
        cluster.api.get(ObjectRef("v1", "PersistentVolumeClaim", "ns", "c"))["status"]["phase"]
        == "Bound"
    )


# -- watch ------------------------------------------------------------------------------------


def test_the_watch_records_every_change_in_order_including_gc_and_finalizers() -> None:
    cluster = FakeCluster()
    start = cluster.cursor
    owner = cluster.create(obj())
    cluster.create(owned_by(owner, "Deployment", "d"))
    cluster.set_finalizers(SUGGESTION, ["f"], None)
    cluster.delete(SUGGESTION, "")
    cluster.set_finalizers(SUGGESTION, [], None)
    cursor, events = cluster.changes_since(start)
    seen = [(e.type, e.ref.kind) for e in events]
    assert seen == [
        ("ADDED", "Suggestion"),
        ("ADDED", "Deployment"),
        ("MODIFIED", "Suggestion"),  # finalizer
        ("MODIFIED", "Suggestion"),  # deletionTimestamp
        ("DELETED", "Suggestion"),  # the last finalizer went
        ("DELETED", "Deployment"),  # garbage collection
    ]
    versions = [int(e.resource_version) for e in events]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert all(e.object["metadata"]["resourceVersion"] == e.resource_version for e in events)
    assert cluster.changes_since(cursor) == (cursor, [])
    assert [e.type for e in cluster.changes_since(cursor - 1)[1]] == ["DELETED"]


def test_a_log_longer_than_its_capacity_is_compacted_at_load() -> None:
    """A state directory saved with a larger log keeps every cursor's meaning."""
    cluster = FakeCluster()
    for index in range(5):
        cluster.create(obj(name=f"o{index}"))
    loaded = WatchLog(cluster.store.log.events(), cluster.store.log.base, capacity=3)
    assert loaded.cursor == cluster.cursor == 5
    assert [e.object["metadata"]["name"] for e in loaded.since(2)[1]] == ["o2", "o3", "o4"]
    with pytest.raises(Gone):
        loaded.since(1)


def test_a_compacted_cursor_is_gone() -> None:
    cluster = FakeCluster()
    cluster.store.log = WatchLog(capacity=3)
    for index in range(5):
        cluster.create(obj(name=f"o{index}"))
    assert cluster.cursor == 5
    with pytest.raises(Gone):
        cluster.changes_since(1)
    assert [e.object["metadata"]["name"] for e in cluster.changes_since(2)[1]] == ["o2", "o3", "o4"]
    with pytest.raises(ValueError, match="ahead"):
        cluster.changes_since(6)
