"""The trial shell against the fake cluster: Katib's T2/T3 through the cluster port."""

from __future__ import annotations

from typing import Any

from katib_resume.adapters.fake import FakeClock, FakeCluster
from katib_resume.adapters.fake.observations import FakeObservationLog
from katib_resume.app.loop.trial_reconcile import reconcile_trial, trial_ref
from katib_resume.core.actions import ObjectRef
from katib_resume.core.observation import MetricRow, TrialKey
from katib_resume.core.plan.trial import TrialContext
from tests.support.trials import job_status, new_trial

JOB = ObjectRef("batch/v1", "Job", "default", "t")
REF = trial_ref("default", "t")


def _settle(cluster: FakeCluster, log: FakeObservationLog, clock: FakeClock) -> None:
    for _ in range(6):
        decided, _ = reconcile_trial(cluster, log, REF, TrialContext(), clock.now())
        if decided is None or not [a for a in decided.actions if type(a).__name__ != "RecordEvent"]:
            return


def _conditions(cluster: FakeCluster) -> list[tuple[str, str]]:
    status: dict[str, Any] = cluster.get(REF).get("status") or {}
    return [(c["type"], c["status"]) for c in status.get("conditions", [])]


def _world() -> tuple[FakeCluster, FakeObservationLog, FakeClock]:
    clock = FakeClock()
    cluster = FakeCluster(clock)
    cluster.create(new_trial("t"))
    return cluster, FakeObservationLog(), clock


def _finish_job(cluster: FakeCluster, *conditions: tuple[str, str]) -> None:
    job = cluster.get(JOB)
    cluster.update_status(JOB, job_status(*conditions), job["metadata"]["resourceVersion"])


def test_the_job_is_created_owned_and_the_trial_runs() -> None:
    cluster, log, clock = _world()
    _settle(cluster, log, clock)
    job = cluster.get(JOB)
    assert job["metadata"]["ownerReferences"][0]["uid"] == cluster.get(REF)["metadata"]["uid"]
    assert _conditions(cluster) == [("Created", "True"), ("Running", "True")]
    assert [e.reason for e in cluster.events] == ["JobCreated", "JobRunning"]


def test_t3_through_the_cluster_port_then_the_job_goes() -> None:
    cluster, log, clock = _world()
    _settle(cluster, log, clock)
    log.report(TrialKey("default", "t"), [MetricRow("2020-08-10T14:47:38Z", "accuracy", "0.9")])
    _finish_job(cluster, ("Complete", "True"))
    _settle(cluster, log, clock)
    assert _conditions(cluster)[-1] == ("Succeeded", "True")
    assert cluster.get(REF)["status"]["observation"]["metrics"][0]["max"] == "0.9"
    assert not cluster.list("batch/v1", "Job", "default", {}), "retainRun false: deleted"


def test_deleting_the_trial_cleans_its_rows_and_lets_it_go() -> None:
    cluster, log, clock = _world()
    _settle(cluster, log, clock)
    trial = cluster.get(REF)
    cluster.delete(REF, trial["metadata"]["uid"])
    _settle(cluster, log, clock)
    assert not cluster.list("kubeflow.org/v1beta1", "Trial", "default", {})
    assert ("delete", TrialKey("default", "t")) in log.calls


def test_the_controller_runs_trial_keys_when_it_runs_trials() -> None:
    from katib_resume.app.embedded.runtime import StaticConfig
    from katib_resume.app.loop.controller import Controller
    from katib_resume.app.loop.keys import Key, keys_of
    from katib_resume.app.loop.trial_reconcile import TrialWiring
    from tests.support.harness import shipped_config

    cluster, log, clock = _world()
    controller = Controller(cluster, StaticConfig(shipped_config()), clock, trials=TrialWiring(log))
    cursor = 0
    controller.enqueue(Key("default", "t", "Trial"))
    for _ in range(10):
        controller.step()
        cursor, changes = cluster.changes_since(cursor)
        for key in keys_of((c.object for c in changes), trials=True):
            controller.enqueue(key)
    assert _conditions(cluster) == [("Created", "True"), ("Running", "True")]
    job = cluster.get(JOB)
    assert list(keys_of([job], trials=True)) == [Key("default", "t", "Trial")]
    assert list(keys_of([job])) == [], "without trials a run object belongs to no key"
    assert str(Key("default", "t", "Trial")) == "Trial default/t"
