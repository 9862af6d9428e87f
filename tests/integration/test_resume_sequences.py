"""Katib's condition sequences (docs/katib-contract.md#suggestion-sequences,
docs/katib-contract.md#experiment-sequences) through the planner, shell and fake cluster.

Each test plays a whole lifecycle: submit, deploy, run trials, complete, raise the budget,
resume, complete again and delete, and compares every status the controller *writes* (no-op
writes would show up as repeated entries) with Katib's documented sequence.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.harness import Bench, load


def experiment(policy: str, **spec: Any) -> dict[str, Any]:
    manifest: dict[str, Any] = copy.deepcopy(load("from-volume-resume.yaml"))
    manifest["spec"]["resumePolicy"] = policy
    manifest["spec"].update(spec)
    return manifest


def first_run(bench: Bench, trials: int = 12) -> None:
    bench.settle()
    bench.set_available()
    bench.settle()
    bench.add_trials(3, "Running")
    bench.settle()
    bench.finish_trials()
    bench.add_trials(trials - 3)
    bench.settle()


def test_from_volume_first_run_completion_restart_and_deletion() -> None:
    bench = Bench(experiment("FromVolume"))
    first_run(bench)
    assert bench.history["Suggestion"] == [
        ["C"],
        ["C", "DR-"],
        ["C", "DR+", "R+"],
        ["C", "R-s", "DR-s", "S_V"],
    ]
    assert bench.history["Experiment"] == [["Cr"], ["Cr", "Ru+"], ["Cr", "Ru-", "SM"]]
    assert bench.deployment() is None and bench.service() is None
    pvc = bench.pvc()
    assert pvc is not None

    bench.edit(maxTrialCount=20)
    bench.settle()
    assert bench.conditions("Experiment") == ["Cr", "Rs", "Ru+"]
    assert bench.history["Suggestion"][4:] == [["C", "DR-s", "R-r"], ["C", "R-r", "DR-"]]
    assert bench.deployment() is not None and bench.service() is not None
    same_pvc, deployment = bench.pvc(), bench.deployment()
    assert same_pvc is not None and same_pvc["metadata"]["uid"] == pvc["metadata"]["uid"]
    assert deployment is not None
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    assert volumes[0]["persistentVolumeClaim"]["claimName"] == "from-volume-resume-random"

    bench.set_available()
    bench.settle()
    assert bench.conditions("Suggestion") == ["C", "DR+", "R+"]
    bench.add_trials(8)
    bench.settle()
    assert bench.conditions("Experiment") == ["Cr", "Rs", "Ru-", "SM"]  # as Katib (bug 2)
    assert bench.conditions("Suggestion") == ["C", "R-s", "DR-s", "S_V"]
    assert bench.deployment() is None and bench.service() is None

    bench.delete_experiment()
    bench.settle()
    assert bench.cluster.store.all() == []


def test_long_running_keeps_the_service_while_restartable() -> None:
    bench = Bench(experiment("LongRunning"))
    first_run(bench)
    assert bench.history["Suggestion"] == [["C"], ["C", "DR-"], ["C", "DR+", "R+"]]
    assert bench.conditions("Experiment") == ["Cr", "Ru-", "SM"]
    assert bench.deployment() is not None and bench.pvc() is None
    bench.edit(maxTrialCount=15)
    bench.settle()
    assert bench.conditions("Experiment") == ["Cr", "Rs", "Ru+"]
    assert bench.conditions("Suggestion") == ["C", "DR+", "R+"]


def test_never_tears_down_and_cannot_restart() -> None:
    bench = Bench(experiment("Never"))
    first_run(bench)
    assert bench.conditions("Suggestion") == ["C", "R-s", "DR-s", "S_N"]
    assert bench.deployment() is None and bench.service() is None and bench.pvc() is None
    bench.edit(maxTrialCount=20)  # admission would deny this; the controller must not restart
    assert not bench.settle()[-1].writes
    assert bench.conditions("Experiment") == ["Cr", "Ru-", "SM"]


@pytest.mark.parametrize("policy", ["Never", "LongRunning", "FromVolume"])
def test_steady_state_plans_no_write(policy: str) -> None:
    bench = Bench(experiment(policy))
    first_run(bench)
    for _ in range(3):
        assert bench.reconcile().writes == ()
