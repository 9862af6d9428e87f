"""The reconcile loop's parts: the work queue, the key map, and how world errors are retried."""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.adapters.fake.clone import clone
from katib_resume.app.loop.controller import Backoff
from katib_resume.app.loop.keys import Key, key_of
from katib_resume.app.loop.queue import WorkQueue
from katib_resume.core.katib import ANNOTATION_OWNER
from tests.support.sim import Sim


def test_a_key_is_queued_once_and_the_earliest_schedule_wins() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a", EPOCH, after=10)
    queue.add("a", EPOCH, after=1)
    queue.add("a", EPOCH, after=5)
    queue.add("b", EPOCH)
    assert len(queue) == 2
    assert queue.pop(EPOCH) == "b"
    assert queue.pop(EPOCH) is None
    assert queue.pop(EPOCH + timedelta(seconds=1)) == "a"
    assert queue.pop(EPOCH + timedelta(seconds=99)) is None


def test_keys_due_at_one_instant_come_out_by_rank_then_by_arrival() -> None:
    queue: WorkQueue[str] = WorkQueue(rank=lambda key: 0 if key.startswith("t") else 1)
    queue.add("e1", EPOCH)
    queue.add("t1", EPOCH)
    queue.add("e0", EPOCH - timedelta(seconds=1))  # due earlier: its rank does not matter
    queue.add("t2", EPOCH)
    queue.add("e2", EPOCH)
    popped = [queue.pop(EPOCH) for _ in range(6)]
    assert popped == ["e0", "t1", "t2", "e1", "e2", None]


def test_backoff_doubles_up_to_its_cap() -> None:
    backoff = Backoff(base=0.5, cap=4)
    assert [backoff.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 4.0]


def test_every_object_leads_back_to_its_experiment() -> None:
    owner = [{"kind": "Suggestion", "name": "exp", "controller": True, "uid": "u"}]
    assert key_of(
        {
            "apiVersion": "kubeflow.org/v1beta1",
            "kind": "Experiment",
            "metadata": {"name": "exp", "namespace": "ns"},
        }
    ) == Key("ns", "exp")
    assert key_of(
        {
            "kind": "Trial",
            "metadata": {
                "name": "t",
                "namespace": "ns",
                "labels": {"katib.kubeflow.org/experiment": "exp"},
            },
        }
    ) == Key("ns", "exp")
    assert key_of(
        {
            "kind": "Deployment",
            "metadata": {"name": "exp-random", "namespace": "ns", "ownerReferences": owner},
        }
    ) == Key("ns", "exp")
    assert key_of(
        {
            "kind": "PersistentVolume",
            "metadata": {"name": "pv", "annotations": {ANNOTATION_OWNER: "ns/exp"}},
        }
    ) == Key("ns", "exp")
    assert key_of({"kind": "ConfigMap", "metadata": {"name": "x", "namespace": "ns"}}) is None


def test_conflicts_and_server_errors_are_retried_until_the_lifecycle_completes() -> None:
    with tempfile.TemporaryDirectory() as root:
        sim = Sim(Path(root), "FromVolume", max_trials=3, parallel=1)
        for _ in range(4):
            sim.cluster.faults.conflict_next_write()
            sim.step()
            sim.cluster.faults.fail_next_writes(2)
            sim.step()
        sim.settle()
        assert sim.completed() and len(sim.trials()) == 3
        errors = sim.runtime.controller.stats.errors
        assert errors.get("Conflict", 0) + errors.get("Unavailable", 0) > 0


def test_a_malformed_experiment_is_reported_not_crashed_on() -> None:
    with tempfile.TemporaryDirectory() as root:
        sim = Sim(Path(root), "FromVolume", max_trials=3, parallel=1)
        sim.settle()
        stored = sim.suggestion()
        assert stored is not None
        suggestion = clone(stored)  # an edit starts from a copy of what was read
        suggestion["spec"]["resumePolicy"] = "Sometimes"  # admission bypassed
        sim.cluster.api.update(suggestion)
        sim.step()
        reasons = [e.reason for e in sim.cluster.events]
        assert "InvalidObject" in reasons
        assert sim.runtime.controller.stats.errors["Malformed"] >= 1
