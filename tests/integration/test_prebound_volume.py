"""A foreign PV pre-bound to our claim's name, in the whole fake world: never used, told, and
the Experiment runs once it is gone.

Kubernetes' binder gives a new PVC to a PV whose ``claimRef`` names it before it provisions
one, so without the check the provisioned mode mounted the stranger's directory and the
suggestion service moved its file aside. Both volume modes are played: the provisioned one
(Katib's shipped katib-config, the fake's default provisioner) and the local one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from tests.support.sim import CHILD, NAMESPACE, Sim, local_config

FOREIGN = "somebody-elses-volume"


def foreign_pv(storage_class: str) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": FOREIGN},
        "spec": {
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "persistentVolumeReclaimPolicy": "Retain",
            "hostPath": {"path": f"/tmp/{FOREIGN}"},
            "claimRef": {"namespace": NAMESPACE, "name": CHILD},
        },
    }


@pytest.mark.parametrize("mode", ["provisioned", "local"])
def test_a_foreign_pre_bound_pv_blocks_the_suggestion_and_is_never_mounted(
    tmp_path: Path, mode: str
) -> None:
    local = mode == "local"
    sim = Sim(tmp_path, config=local_config() if local else None)
    stranger = sim.cluster.create(foreign_pv("katib-suggestion" if local else "standard"))
    data = tmp_path / "volumes" / "host" / "tmp" / FOREIGN
    data.mkdir(parents=True)
    (data / "suggestion-state.json").write_text("their data")
    for _ in range(30):
        sim.step()
    suggestion = sim.suggestion()
    assert suggestion is not None
    ready = next(c for c in suggestion["status"]["conditions"] if c["type"] == "DeploymentReady")
    assert (ready["status"], ready["reason"]) == ("False", "OwnershipConflict")
    assert ready["message"].startswith(f"PersistentVolume {FOREIGN} is pre-bound to")
    assert sim.pvc() is None and sim.deployment() is None and sim.trials() == []
    assert sorted(p.name for p in data.iterdir()) == ["suggestion-state.json"]
    assert (data / "suggestion-state.json").read_text() == "their data"
    sim.cluster.delete(ObjectRef.of(stranger), stranger["metadata"]["uid"])
    sim.settle()
    pvc = sim.pvc()
    assert pvc is not None and pvc["spec"]["volumeName"] != FOREIGN
    assert sim.completed() and len(sim.trials()) == 12
    assert (data / "suggestion-state.json").read_text() == "their data"
