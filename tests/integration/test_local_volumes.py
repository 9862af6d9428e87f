"""The local volume mode on whole lifecycles: the seed design's flow, and ownership as for any PV.

On the embedded runtime (its default config is in this mode): the PVC and the local PV appear on
the first run, the directory outlives the service through completion, the resumed service mounts
the same directory, and deleting the Experiment removes the PV and the directory. On the bench:
the PV is pre-bound, owned by annotation and cleaned up by our finalizer, and a foreign PV of the
same name is never adopted, exactly as for a configured PV.
"""

from __future__ import annotations

from pathlib import Path

from katib_resume.app.common.inputs import embedded_config
from tests.integration.test_resume_sequences import experiment
from tests.support.harness import Bench, owned_volume_is_cleaned_up, shipped_config
from tests.support.sim import CHILD, NAMESPACE, Sim

PV_NAME = "from-volume-resume-random-kubeflow"
LOCAL = {"persistentVolumeClaimSpec": {"storageClassName": "katib-suggestion"}}


def directory(root: Path) -> Path:
    return root / "volumes" / "host" / "tmp" / "katib" / "suggestions" / PV_NAME


def test_the_seed_designs_flow_on_the_embedded_runtime(tmp_path: Path) -> None:
    sim = Sim(tmp_path, config=embedded_config())
    sim.settle()
    pv = sim.get("PersistentVolume", PV_NAME, "v1")
    assert pv is not None and pv["metadata"]["labels"] == {"type": "local"}
    assert pv["spec"]["hostPath"]["path"] == f"/tmp/katib/suggestions/{PV_NAME}"
    assert sim.deployment() is None and sim.service() is None  # completed: service released
    state = directory(tmp_path) / "suggestion-state.json"
    assert state.is_file()  # kept through completion
    first = sim.assignments()

    assert sim.raise_budget(3)
    sim.step()
    for _ in range(10):
        if sim.deployment() is not None:
            break
        sim.step()
    mounted = sim.runtime.world.volume_dir(NAMESPACE, CHILD)
    assert mounted == directory(tmp_path)  # the resumed service mounts the same directory
    sim.settle()
    again = sim.get("PersistentVolume", PV_NAME, "v1")
    assert again is not None and again["metadata"]["uid"] == pv["metadata"]["uid"]
    assert sim.assignments()[: len(first)] == first and len(sim.assignments()) == 15

    assert sim.delete_experiment() == []
    assert not directory(tmp_path).exists()


def test_the_local_pv_is_owned_and_cleaned_up_like_a_configured_one() -> None:
    bench = Bench(experiment("FromVolume"), shipped_config(**LOCAL))
    bench.settle()
    assert owned_volume_is_cleaned_up(bench)["metadata"]["name"] == PV_NAME


def test_a_foreign_pv_of_the_local_name_is_never_adopted() -> None:
    bench = Bench(experiment("FromVolume"), shipped_config(**LOCAL))
    foreign = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": PV_NAME, "labels": {"type": "local"}},
        "spec": {"storageClassName": "katib-suggestion", "hostPath": {"path": "/tmp/x"}},
    }
    bench.cluster.create(foreign)
    bench.settle()
    suggestion = bench.suggestion()
    assert suggestion is not None
    ready = next(c for c in suggestion["status"]["conditions"] if c["type"] == "DeploymentReady")
    assert (ready["status"], ready["reason"]) == ("False", "OwnershipConflict")
    assert PV_NAME in ready["message"] and bench.pvc() is None
