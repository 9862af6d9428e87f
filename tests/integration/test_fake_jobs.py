"""The fake cluster's Job controller and pod kubelet, with real local processes."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from katib_resume.adapters.fake import FakeClock, FakeCluster, FakeWorld
from katib_resume.adapters.fake.groups import reap
from katib_resume.adapters.fake.jobs import finished
from katib_resume.adapters.fake.pods import SimulatedRuntime
from katib_resume.adapters.fake.processes import ProcessRuntime
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Unavailable
from tests.support.pids import alive

NS = "default"
needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def job(name: str, command: list[str], **spec: object) -> Manifest:
    container = {"name": "main", "image": "busybox", "command": command}
    template = {"spec": {"containers": [container], "restartPolicy": "Never"}}
    meta = {"name": name, "namespace": NS}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {"template": template, **spec},
    }


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[FakeCluster, FakeWorld, ProcessRuntime]]:
    cluster = FakeCluster(FakeClock())
    world = FakeWorld(cluster, tmp_path / "volumes")
    runtime = ProcessRuntime()
    world.pods.runtime = runtime
    try:
        yield cluster, world, runtime
    finally:
        runtime.stop_all()


def until(world: FakeWorld, done: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "not done in time"
        world.tick()
        assert world.pods.runtime is not None
        world.pods.runtime.wait(0.05)


def status(cluster: FakeCluster, name: str) -> Manifest:
    return cluster.get(ObjectRef("batch/v1", "Job", NS, name)).get("status") or {}


def condition_types(cluster: FakeCluster, name: str) -> list[tuple[str, str]]:
    return [(c["type"], c["reason"]) for c in status(cluster, name).get("conditions", [])]


def pods(cluster: FakeCluster) -> list[Manifest]:
    return list(cluster.list("v1", "Pod", NS, {}))


def test_a_job_runs_its_command_and_completes_with_its_log_kept(
    world: tuple[FakeCluster, FakeWorld, ProcessRuntime], tmp_path: Path
) -> None:
    cluster, fake, _ = world
    cluster.create(
        job(
            "ok",
            [sys.executable, "-c", "print('loss=0.25'); import sys; print('err', file=sys.stderr)"],
        )
    )
    until(fake, lambda: finished(cluster.get(ObjectRef("batch/v1", "Job", NS, "ok"))))
    assert condition_types(cluster, "ok") == [
        ("SuccessCriteriaMet", "CompletionsReached"),
        ("Complete", "CompletionsReached"),
    ]
    assert status(cluster, "ok")["succeeded"] == 1 and "completionTime" in status(cluster, "ok")
    (pod,) = pods(cluster)
    assert pod["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "ok"
    assert pod["status"]["phase"] == "Succeeded"
    (log,) = (tmp_path / "trials" / NS / "ok").glob("*.log")
    assert log.read_text().split() == ["loss=0.25", "err"]


def test_a_failing_command_fails_the_job_after_its_backoff_limit(
    world: tuple[FakeCluster, FakeWorld, ProcessRuntime],
) -> None:
    cluster, fake, _ = world
    cluster.create(job("bad", ["sh", "-c", "exit 3"], backoffLimit=1))
    until(fake, lambda: finished(cluster.get(ObjectRef("batch/v1", "Job", NS, "bad"))))
    assert condition_types(cluster, "bad") == [
        ("FailureTarget", "BackoffLimitExceeded"),
        ("Failed", "BackoffLimitExceeded"),
    ]
    assert status(cluster, "bad")["failed"] == 2  # the first try and one retry
    codes = [
        p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"]
        for p in pods(cluster)
    ]
    assert codes == [3, 3]


def test_a_missing_executable_fails_the_pod_with_a_warning(
    world: tuple[FakeCluster, FakeWorld, ProcessRuntime],
) -> None:
    cluster, fake, _ = world
    cluster.create(job("nothing", ["no-such-program-here"], backoffLimit=0))
    until(fake, lambda: finished(cluster.get(ObjectRef("batch/v1", "Job", NS, "nothing"))))
    (pod,) = pods(cluster)
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (128, "StartError")
    assert any("executable file not found" in e.message for e in cluster.events)


def wait_for_file(path: Path, world: FakeWorld) -> int:
    until(world, path.exists)
    time.sleep(0.05)
    return int(path.read_text())


@needs_proc
def test_deleting_the_job_stops_the_whole_process_group(
    world: tuple[FakeCluster, FakeWorld, ProcessRuntime], tmp_path: Path
) -> None:
    cluster, fake, runtime = world
    marker = tmp_path / "grandchild.pid"
    script = f"sleep 300 & echo $! > {marker}; wait"
    cluster.create(job("long", ["sh", "-c", script]))
    grandchild = wait_for_file(marker, fake)
    created = cluster.get(ObjectRef("batch/v1", "Job", NS, "long"))
    cluster.delete(ObjectRef.of(created), created["metadata"]["uid"])
    until(fake, lambda: not pods(cluster) and runtime.busy == 0, seconds=10)
    assert not alive(grandchild)


@needs_proc
def test_what_a_killed_command_left_is_stopped_and_its_pod_fails_as_lost(
    world: tuple[FakeCluster, FakeWorld, ProcessRuntime], tmp_path: Path
) -> None:
    cluster, fake, _ = world
    marker = tmp_path / "grandchild.pid"
    script = f"sleep 300 & echo $! > {marker}; wait"
    cluster.create(job("left", ["sh", "-c", script], backoffLimit=0))
    grandchild = wait_for_file(marker, fake)
    (record,) = (tmp_path / "trials" / NS / "left").glob("*.pid")
    # the next command: a kubelet that knows nothing, on the records left on disk
    fake.pods.started.clear()
    fake.pods.runtime = ProcessRuntime()
    until(fake, lambda: finished(cluster.get(ObjectRef("batch/v1", "Job", NS, "left"))))
    assert not alive(grandchild)
    (pod,) = pods(cluster)
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (137, "ContainerStatusUnknown")
    assert condition_types(cluster, "left")[-1] == ("Failed", "BackoffLimitExceeded")
    assert not record.exists() and not reap(record)


def test_simulated_containers_print_their_script_and_succeed(tmp_path: Path) -> None:
    cluster = FakeCluster(FakeClock())
    world = FakeWorld(cluster, tmp_path / "volumes")
    seen: list[str] = []
    world.pods.runtime = SimulatedRuntime(lambda pod: f"loss=0.5 for {pod['metadata']['name']}\n")
    world.pods.on_success = lambda pod, logs, workdir: seen.append(logs["main"])
    cluster.create(job("sim", ["python3", "/opt/train.py"]))
    world.tick(2)
    assert finished(cluster.get(ObjectRef("batch/v1", "Job", NS, "sim")))
    (pod,) = pods(cluster)
    assert seen == [f"loss=0.5 for {pod['metadata']['name']}\n"]


def test_a_report_that_fails_is_made_again_before_the_pod_ends(tmp_path: Path) -> None:
    cluster = FakeCluster(FakeClock())
    world = FakeWorld(cluster, tmp_path / "volumes")
    world.pods.runtime = SimulatedRuntime(lambda pod: "loss=0.5\n")
    attempts: list[str] = []

    def report(pod: Manifest, logs: Mapping[str, str], workdir: Path) -> None:
        attempts.append(logs["main"])
        if len(attempts) == 1:
            raise Unavailable("db-manager is down")

    world.pods.on_success = report
    cluster.create(job("flaky", ["python3", "/opt/train.py"]))
    world.tick()
    (pod,) = pods(cluster)
    assert pod.get("status", {}).get("phase", "Pending") != "Succeeded"  # not before its report
    world.tick()
    assert attempts == ["loss=0.5\n", "loss=0.5\n"]
    assert finished(cluster.get(ObjectRef("batch/v1", "Job", NS, "flaky")))
