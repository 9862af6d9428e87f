"""The reconcile loop's parts: the work queue, the key map, and how world errors are retried."""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.adapters.fake.clone import clone
from katib_resume.app.loop.controller import Backoff
from katib_resume.app.loop.keys import Key, key_of
from katib_resume.app.loop.queue import WorkQueue
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import ANNOTATION_OWNER
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import TooLarge
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


def test_a_suggestion_too_large_to_store_is_said_once_on_its_experiment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that will not store the Suggestion's assignments past two (etcd's limit, reached
    by a long Experiment: kubeflow/katib#1847) stops the Experiment where it is; a Warning on the
    Experiment says why, once for the streak of refusals."""
    with tempfile.TemporaryDirectory() as root:
        sim = Sim(Path(root), "FromVolume", max_trials=6, parallel=1)
        cluster = sim.runtime.controller.cluster
        write = cluster.update_status

        def refusing(ref: ObjectRef, status: Manifest, version: str | None, **kw: Any) -> Any:
            if ref.kind == "Suggestion" and len(status.get("suggestions") or []) > 2:
                raise TooLarge(f"update status of {ref}: etcdserver: request is too large")
            return write(ref, status, version, **kw)

        monkeypatch.setattr(cluster, "update_status", refusing)
        for _ in range(120):
            sim.step()
        warned = [e for e in sim.cluster.events if e.reason == "TooLarge"]
        assert [e.ref.kind for e in warned] == ["Experiment"]
        assert all(e.type == "Warning" for e in warned)
        assert all("etcdserver: request is too large" in e.message for e in warned)
        assert all("kubeflow/katib#1847" in e.message for e in warned)
        assert sim.runtime.controller.stats.errors["TooLarge"] > 2  # retried all along
        assert len(sim.trials()) == 2
