"""Kubernetes' own controllers in the fake world: binding, provisioning, protection, reclaim,
the kubelet and background garbage collection, as a controller meets them in a real cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake import FakeCluster, FakeWorld, OutsideVolumeRoot
from katib_resume.adapters.fake.reclaim import PV_PROTECTION, PVC_PROTECTION
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import NotFound

NS = "ns"
CLAIM = ObjectRef("v1", "PersistentVolumeClaim", NS, "claim")
DEPLOYMENT = ObjectRef("apps/v1", "Deployment", NS, "suggestion")


def pvc(volume: str | None = None, **spec: Any) -> Manifest:
    body: Manifest = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
    }
    body.update(spec)
    if volume:
        body["volumeName"] = volume
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "claim", "namespace": NS},
        "spec": body,
    }


def pv(
    name: str = "vol", path: str = "/tmp/katib/vol", claim: str | None = "claim", **spec: Any
) -> Manifest:
    body: Manifest = {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Delete",
        "hostPath": {"path": path},
        **spec,
    }
    if claim:
        body["claimRef"] = {"namespace": NS, "name": claim}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": body,
    }


def deployment(claim: str | None = "claim") -> Manifest:
    volumes = (
        [{"name": "suggestion-volume", "persistentVolumeClaim": {"claimName": claim}}]
        if claim
        else []
    )
    template = {"spec": {"containers": [{"name": "suggestion"}], "volumes": volumes}}
    meta = {"name": DEPLOYMENT.name, "namespace": NS}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {"template": template},
    }


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster()


@pytest.fixture
def world(cluster: FakeCluster, tmp_path: Path) -> FakeWorld:
    return FakeWorld(cluster, tmp_path / "volumes")


def get(cluster: FakeCluster, ref: ObjectRef) -> Manifest | None:
    try:
        return cluster.get(ref)
    except NotFound:
        return None


def pv_named(cluster: FakeCluster, name: str) -> Manifest | None:
    return get(cluster, ObjectRef("v1", "PersistentVolume", None, name))


def available(cluster: FakeCluster) -> bool:
    found = get(cluster, DEPLOYMENT)
    conditions = (found or {}).get("status", {}).get("conditions", [])
    return any(c["type"] == "Available" and c["status"] == "True" for c in conditions)


# -- binding and provisioning -----------------------------------------------------------------


def test_a_prebound_claim_binds_its_volume(cluster: FakeCluster, world: FakeWorld) -> None:
    cluster.create(pv())
    claim = cluster.create(pvc("vol"))
    world.tick()
    volume, bound = pv_named(cluster, "vol"), cluster.get(CLAIM)
    assert volume is not None and volume["status"]["phase"] == "Bound"
    assert volume["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"]
    assert bound["status"] == {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "1Gi"},
    }
    assert bound["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"


def test_a_claim_naming_a_missing_or_foreign_volume_stays_pending(
    cluster: FakeCluster, world: FakeWorld
) -> None:
    cluster.create(pvc("vol"))
    world.tick(3)
    assert cluster.get(CLAIM)["status"]["phase"] == "Pending"
    cluster.create(pv(claim="somebody-else"))
    world.tick(3)
    assert cluster.get(CLAIM)["status"]["phase"] == "Pending"
    assert cluster.list("v1", "PersistentVolume", None, {})[0]["status"]["phase"] == "Available"


def test_a_claim_without_volume_is_provisioned_dynamically(
    cluster: FakeCluster, world: FakeWorld
) -> None:
    claim = cluster.create(
        pvc(accessModes=["ReadWriteMany"], resources={"requests": {"storage": "5Gi"}})
    )
    world.tick()
    name = f"pvc-{claim['metadata']['uid']}"
    volume = pv_named(cluster, name)
    assert volume is not None
    spec = volume["spec"]
    assert spec["capacity"] == {"storage": "5Gi"} and spec["accessModes"] == ["ReadWriteMany"]
    assert spec["persistentVolumeReclaimPolicy"] == "Delete" and "path" in spec["hostPath"]
    assert spec["claimRef"]["uid"] == claim["metadata"]["uid"]
    bound = cluster.get(CLAIM)
    assert bound["spec"]["volumeName"] == name and bound["status"]["phase"] == "Bound"
    assert volume["metadata"]["finalizers"] == [PV_PROTECTION]


def test_an_unclaimed_volume_of_the_class_is_taken_and_no_class_means_no_provisioning(
    cluster: FakeCluster, world: FakeWorld
) -> None:
    cluster.create(pv("big", claim=None, storageClassName="standard", capacity={"storage": "10Gi"}))
    cluster.create(pv("small", claim=None, storageClassName="standard"))
    cluster.create(pvc())
    world.tick()
    assert cluster.get(CLAIM)["spec"]["volumeName"] == "small"
    other = pvc(storageClassName="")
    other["metadata"]["name"] = "static-only"
    cluster.create(other)
    world.tick(2)
    assert (
        cluster.get(ObjectRef("v1", "PersistentVolumeClaim", NS, "static-only"))["status"]["phase"]
        == "Pending"
    )


# -- protection and reclaim -------------------------------------------------------------------


def test_a_deleted_claim_in_use_stays_terminating(cluster: FakeCluster, world: FakeWorld) -> None:
    claim = cluster.create(pvc())
    assert claim["metadata"]["finalizers"] == [PVC_PROTECTION]
    used = cluster.create(deployment())
    world.tick(2)
    cluster.delete(CLAIM, claim["metadata"]["uid"])
    world.tick(3)
    assert "deletionTimestamp" in cluster.get(CLAIM)["metadata"]
    assert available(cluster)  # the running pod keeps its volume
    cluster.delete(DEPLOYMENT, used["metadata"]["uid"])
    world.tick()
    assert get(cluster, CLAIM) is None


def test_reclaim_delete_removes_the_volume_and_its_directory(
    cluster: FakeCluster, world: FakeWorld, tmp_path: Path
) -> None:
    claim = cluster.create(pvc())
    used = cluster.create(deployment())
    world.tick()
    directory = world.volume_dir(NS, DEPLOYMENT.name)
    assert directory is not None
    (directory / "checkpoint").write_text("data")
    name = cluster.get(CLAIM)["spec"]["volumeName"]
    cluster.delete(DEPLOYMENT, used["metadata"]["uid"])
    cluster.delete(CLAIM, claim["metadata"]["uid"])
    world.tick(3)
    assert get(cluster, CLAIM) is None and pv_named(cluster, name) is None
    assert not directory.exists() and directory.parent.exists()


def test_static_hostpath_volumes_are_deleted_under_tmp_only(
    cluster: FakeCluster, world: FakeWorld
) -> None:
    cluster.create(pv(path="/var/katib/vol"))
    claim = cluster.create(pvc("vol"))
    world.tick()
    cluster.delete(CLAIM, claim["metadata"]["uid"])
    world.tick(2)
    volume = pv_named(cluster, "vol")
    assert volume is not None and volume["status"]["phase"] == "Failed"
    assert "only supports /tmp/" in volume["status"]["message"]


def test_reclaim_retain_releases_the_volume(cluster: FakeCluster, world: FakeWorld) -> None:
    cluster.create(pv(persistentVolumeReclaimPolicy="Retain"))
    claim = cluster.create(pvc("vol"))
    world.tick()
    cluster.delete(CLAIM, claim["metadata"]["uid"])
    world.tick(2)
    volume = pv_named(cluster, "vol")
    assert volume is not None and volume["status"]["phase"] == "Released"
    cluster.delete(ObjectRef.of(volume), volume["metadata"]["uid"])  # no longer Bound: it goes
    world.tick()
    assert pv_named(cluster, "vol") is None


def test_a_deleted_bound_volume_waits_for_its_claim(cluster: FakeCluster, world: FakeWorld) -> None:
    volume = cluster.create(pv())
    claim = cluster.create(pvc("vol"))
    world.tick()
    cluster.delete(ObjectRef.of(volume), volume["metadata"]["uid"])
    world.tick(2)
    assert pv_named(cluster, "vol") is not None
    cluster.delete(CLAIM, claim["metadata"]["uid"])
    world.tick(3)
    assert pv_named(cluster, "vol") is None


# -- kubelet and volume directories -----------------------------------------------------------


def test_a_deployment_becomes_available_after_n_ticks(cluster: FakeCluster, tmp_path: Path) -> None:
    world = FakeWorld(cluster, tmp_path, ready_after_ticks=3)
    cluster.create(deployment(None))
    world.tick(2)
    assert not available(cluster)
    assert (
        cluster.get(DEPLOYMENT)["status"]["conditions"][0]["reason"] == "MinimumReplicasUnavailable"
    )
    world.tick()
    assert available(cluster) and cluster.get(DEPLOYMENT)["status"]["readyReplicas"] == 1


def test_no_availability_while_a_mounted_claim_is_unbound(
    cluster: FakeCluster, world: FakeWorld
) -> None:
    cluster.create(pvc("vol"))
    cluster.create(deployment())
    world.tick(5)
    assert not available(cluster)
    assert world.volume_dir(NS, DEPLOYMENT.name) is None
    cluster.create(pv())
    world.tick()
    assert available(cluster)


def test_a_pod_crashes_holds_and_flaps(cluster: FakeCluster, world: FakeWorld) -> None:
    cluster.create(deployment(None))
    world.tick()
    world.kubelet.set_unavailable(NS, DEPLOYMENT.name)
    assert not available(cluster)
    world.tick()
    assert available(cluster)
    world.kubelet.set_unavailable(NS, DEPLOYMENT.name, hold=True)
    world.tick(3)
    assert not available(cluster)
    world.kubelet.release(NS, DEPLOYMENT.name)
    world.kubelet.set_flapping(NS, DEPLOYMENT.name, 2)
    seen = []
    for _ in range(6):
        world.tick()
        seen.append(available(cluster))
    assert seen == [True, True, False, True, True, False]


def test_volume_dir_is_a_real_directory_inside_the_volume_root(
    cluster: FakeCluster, world: FakeWorld
) -> None:
    cluster.create(pv(path="/tmp/katib/../../../etc/vol"))
    cluster.create(pvc("vol"))
    cluster.create(deployment())
    world.tick()
    directory = world.volume_dir(NS, DEPLOYMENT.name)
    assert directory is not None and directory.is_dir()
    assert directory == (world.volume_root / "host" / "etc" / "vol").resolve()
    with pytest.raises(NotFound):
        world.volume_dir(NS, "missing")


def test_a_volume_escaping_by_symlink_is_refused(
    cluster: FakeCluster, world: FakeWorld, tmp_path: Path
) -> None:
    (world.volume_root / "host").mkdir(parents=True)
    (world.volume_root / "host" / "escape").symlink_to(tmp_path)
    cluster.create(pv(path="/escape/vol"))
    cluster.create(pvc("vol"))
    cluster.create(deployment())
    world.tick()
    with pytest.raises(OutsideVolumeRoot):
        world.volume_dir(NS, DEPLOYMENT.name)


def test_a_deployment_mounting_nothing_has_no_volume_dir(
    cluster: FakeCluster, world: FakeWorld
) -> None:
    cluster.create(deployment(None))
    assert world.volume_dir(NS, DEPLOYMENT.name) is None


# -- background garbage collection ------------------------------------------------------------


def test_with_a_world_gc_runs_in_the_background_and_spares_a_pv(
    cluster: FakeCluster, world: FakeWorld
) -> None:
    owner = cluster.create(
        {
            "apiVersion": "kubeflow.org/v1beta1",
            "kind": "Suggestion",
            "metadata": {"name": "s", "namespace": NS},
        }
    )
    owner_ref = {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Suggestion",
        "name": "s",
        "uid": owner["metadata"]["uid"],
    }
    owned = deployment(None)
    owned["metadata"]["ownerReferences"] = [owner_ref]
    cluster.create(owned)
    volume = pv(claim=None)
    volume["metadata"]["ownerReferences"] = [owner_ref]
    cluster.create(volume)
    cluster.delete(ObjectRef.of(owner), owner["metadata"]["uid"])
    assert get(cluster, DEPLOYMENT) is not None  # not yet: the collector runs behind
    world.tick()
    assert get(cluster, DEPLOYMENT) is None and pv_named(cluster, "vol") is not None
    dangling = deployment(None)
    dangling["metadata"].update(name="late", ownerReferences=[owner_ref])
    cluster.create(dangling)
    world.tick()
    assert get(cluster, ObjectRef("apps/v1", "Deployment", NS, "late")) is None
