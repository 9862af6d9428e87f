"""A kept volume lost by hand, in the whole fake world: said so, and the Experiment still ends.

Two ways a user loses the suggestion volume. The PVC is deleted while the Suggestion is
Succeeded: Katib keeps saying "suggestion volume is not deleted, can be restarted", and a
restart silently starts on a new, empty volume. The PVC is deleted while the service runs, and
then its pod crashes: the claim stays Terminating (the Deployment mounts it), the pod cannot
start on it, and the Experiment stalls for ever behind "Deployment is not ready". Here the first
is told in the Succeeded condition and in the restart's Warning event, and the second is told
(``VolumeTerminating``) and repaired: the unavailable Deployment is deleted so that the claim
can go, and the service comes back on a new claim and rebuilds its state from the trials.
Both volume modes are played.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from tests.support.sim import CHILD, NAMESPACE, Sim, local_config

CLAIM = f"{NAMESPACE}/{CHILD}"
MODES = ["provisioned", "local"]


def _sim(root: Path, mode: str, parallel: int = 3) -> Sim:
    return Sim(root, parallel=parallel, config=local_config() if mode == "local" else None)


def _condition(sim: Sim, type_: str) -> Manifest:
    suggestion = sim.suggestion()
    assert suggestion is not None
    return next(c for c in suggestion["status"]["conditions"] if c["type"] == type_)


def _delete_pvc(sim: Sim) -> str:
    pvc = sim.pvc()
    assert pvc is not None
    sim.cluster.delete(ObjectRef.of(pvc), pvc["metadata"]["uid"])
    return str(pvc["metadata"]["uid"])


def _events(sim: Sim, reason: str) -> list[tuple[str, str]]:
    return [(e.type, e.message) for e in sim.cluster.events if e.reason == reason]


@pytest.mark.parametrize("mode", MODES)
def test_a_volume_lost_after_success_is_said_so_and_the_restart_tells(
    tmp_path: Path, mode: str
) -> None:
    sim = _sim(tmp_path, mode)
    sim.settle()
    assert "volume is not deleted, can be restarted" in _condition(sim, "Succeeded")["message"]
    old = _delete_pvc(sim)
    for _ in range(5):
        sim.step()
    assert sim.pvc() is None
    succeeded = _condition(sim, "Succeeded")
    assert (succeeded["status"], succeeded["reason"]) == ("True", "Experiment is succeeded")
    assert succeeded["message"] == (
        f"Suggestion is succeeded, suggestion volume is lost (PersistentVolumeClaim {CLAIM} is "
        "missing), can be restarted on a new volume without the saved state"
    )
    assert sim.raise_budget(8)
    sim.settle()
    assert sim.completed() and len(sim.trials()) == 20
    assert _events(sim, "RestartRequested")[-1] == (
        "Warning",
        f"Suggestion Succeeded -> Restarting: PersistentVolumeClaim {CLAIM} is missing; "
        "the service starts on a new volume without its saved state",
    )
    (rebuilt,) = _events(sim, "SuggestionStateRebuilt")
    assert rebuilt[0] == "Warning" and "rebuilt by replaying 12 assignments" in rebuilt[1]
    pvc = sim.pvc()
    assert pvc is not None and pvc["metadata"]["uid"] != old
    assert "volume is not deleted, can be restarted" in _condition(sim, "Succeeded")["message"]


@pytest.mark.parametrize("mode", MODES)
def test_a_claim_terminating_under_a_crashed_pod_is_told_and_released(
    tmp_path: Path, mode: str
) -> None:
    sim = _sim(tmp_path, mode, parallel=1)
    while len(sim.trials()) < 8:
        sim.step()
    _delete_pvc(sim)
    sim.world.kubelet.set_unavailable(NAMESPACE, CHILD)
    seen: list[tuple[str, str]] = []
    for _ in range(6):
        sim.step()
        ready = _condition(sim, "DeploymentReady")
        seen.append((ready["reason"], ready["message"]))
    assert (
        "VolumeTerminating",
        f"Deployment is not ready: PersistentVolumeClaim {CLAIM} is terminating; once it is gone "
        "a new claim is made, without the saved state",
    ) in seen
    assert _events(sim, "VolumeTerminating") == [
        (
            "Warning",
            f"Deployment {CLAIM} is deleted: its pod cannot start on the terminating "
            f"PersistentVolumeClaim {CLAIM} and keeps it from going",
        )
    ]
    sim.settle()
    assert sim.completed() and len(sim.trials()) == 12
    (rebuilt,) = _events(sim, "SuggestionStateRebuilt")
    assert "rebuilt by replaying 8 assignments" in rebuilt[1]
