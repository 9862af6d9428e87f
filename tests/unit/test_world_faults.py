"""Faults of the simulated Kubernetes controllers: late GC, slow binder, crashed kubelet."""

from __future__ import annotations

from pathlib import Path

import pytest

from katib_resume.adapters.fake import FakeCluster, FakeWorld
from katib_resume.adapters.fake.world_faults import Tick, WorldFaults
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest

NS = "ns"


def _world(tmp_path: Path) -> FakeWorld:
    return FakeWorld(FakeCluster(), tmp_path / "volumes")


def _deployment(world: FakeWorld, name: str = "d") -> Manifest:
    return world.cluster.api.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": 1, "template": {"spec": {"containers": []}}},
        }
    )


def _available(world: FakeWorld, name: str = "d") -> bool:
    found = world.cluster.store.find(ObjectRef("apps/v1", "Deployment", NS, name)) or {}
    conditions = found.get("status", {}).get("conditions", [])
    return any(c["type"] == "Available" and c["status"] == "True" for c in conditions)


def _claim(world: FakeWorld) -> ObjectRef:
    created = world.cluster.api.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "c", "namespace": NS},
            "spec": {"resources": {"requests": {"storage": "1Gi"}}},
        }
    )
    return ObjectRef.of(created)


def _phase(world: FakeWorld, ref: ObjectRef) -> str | None:
    found = world.cluster.store.find(ref) or {}
    phase = found.get("status", {}).get("phase")
    return None if phase is None else str(phase)


def test_a_crashed_kubelet_takes_every_pod_down_until_it_is_back(tmp_path: Path) -> None:
    world = _world(tmp_path)
    _deployment(world, "a")
    _deployment(world, "b")
    world.tick()
    assert _available(world, "a") and _available(world, "b")
    world.faults.crash_kubelet(down_ticks=2)
    world.tick()
    assert not _available(world, "a") and not _available(world, "b")
    world.tick()
    assert not _available(world, "a")
    world.tick()
    assert _available(world, "a") and _available(world, "b")
    assert not world.faults.pending


def test_a_crash_keeps_a_held_pod_held(tmp_path: Path) -> None:
    world = _world(tmp_path)
    _deployment(world)
    world.tick()
    world.kubelet.set_unavailable(NS, "d", hold=True)
    world.faults.crash_kubelet()
    world.tick(3)
    assert not _available(world)
    world.kubelet.release(NS, "d")
    world.tick()
    assert _available(world)


def test_a_slow_binder_leaves_the_claim_pending_for_its_ticks(tmp_path: Path) -> None:
    world = _world(tmp_path)
    claim = _claim(world)
    world.faults.slow_binder(3)
    world.tick(3)
    assert _phase(world, claim) != "Bound"
    world.tick(2)
    assert _phase(world, claim) == "Bound"


def test_a_late_garbage_collector_collects_when_it_runs_again(tmp_path: Path) -> None:
    world = FakeWorld(FakeCluster(), tmp_path / "volumes", background_gc=True)
    api = world.cluster.api
    owner = _deployment(world, "owner")
    dependent = api.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "s",
                "namespace": NS,
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "owner",
                        "uid": owner["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
        }
    )
    api.delete(ObjectRef.of(owner), owner["metadata"]["uid"])
    world.faults.skip_gc(2)
    world.tick(2)
    assert world.cluster.store.find(ObjectRef.of(dependent)) is not None
    world.tick()
    assert world.cluster.store.find(ObjectRef.of(dependent)) is None


def test_random_world_faults_repeat_under_one_seed() -> None:
    def run(seed: int) -> list[Tick]:
        faults = WorldFaults()
        faults.at_random(gc=0.3, binder=0.3, kubelet=0.2, seed=seed)
        return [faults.tick() for _ in range(50)]

    assert run(4) == run(4) and run(4) != run(5)
    ticks = run(4)
    assert {t.gc for t in ticks} == {True, False} and any(t.crashed for t in ticks)


def test_fault_arguments_are_checked() -> None:
    faults = WorldFaults()
    with pytest.raises(ValueError, match=">= 1 tick"):
        faults.crash_kubelet(0)
    with pytest.raises(ValueError, match=">= 0"):
        faults.skip_gc(-1)
    with pytest.raises(ValueError, match="within"):
        faults.at_random(gc=2.0)
