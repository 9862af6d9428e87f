"""Trials as real local processes on the embedded runtime: Jobs, pods, the metrics collector and
the trial reconcile together, with the processes' own records of when they ran."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake import FakeClock, FakeCluster, FakeWorld
from katib_resume.app.embedded.runtime import METRICS_WAIT, Runtime
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from tests.support.pids import gone_soon
from tests.support.sim import NAME, NAMESPACE, example, local_config

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

RECORDING = """
import pathlib, sys, time
log = pathlib.Path("times.log")
with log.open("a") as out:
    out.write(f"start {time.time_ns()}\\n")
time.sleep(float(sys.argv[1]))
with log.open("a") as out:
    out.write(f"end {time.time_ns()}\\n")
print(sys.argv[2])
sys.exit(int(sys.argv[3]))
"""
"""A trial that records when it started and ended (in its Trial's working directory)."""


def experiment(
    tmp_path: Path, argv: list[str], *, trials: int, parallel: int, **spec: Any
) -> Manifest:
    manifest = example("FromVolume", trials, parallel, 1)
    manifest["spec"].update(spec)
    job = manifest["spec"]["trialTemplate"]["trialSpec"]["spec"]
    job["template"]["spec"]["containers"][0]["command"] = argv
    return manifest


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[FakeCluster, FakeWorld]]:
    cluster = FakeCluster(FakeClock())
    yield cluster, FakeWorld(cluster, tmp_path / "volumes")


def runtime(world: tuple[FakeCluster, FakeWorld], tmp_path: Path) -> Runtime:
    cluster, fake = world
    return Runtime(cluster, fake, local_config(), trial_command=True, workdir=tmp_path / "trials",
                   wait_seconds=0.05)  # fmt: skip


def trials(cluster: FakeCluster) -> list[Manifest]:
    return list(cluster.list(API_VERSION, "Trial", NAMESPACE, {}))


def completed(cluster: FakeCluster) -> bool:
    found = cluster.store.find(ObjectRef(API_VERSION, "Experiment", NAMESPACE, NAME))
    conditions = ((found or {}).get("status") or {}).get("conditions") or []
    return any(c["type"] in ("Succeeded", "Failed") and c["status"] == "True" for c in conditions)


def last_condition(trial: Manifest) -> tuple[str, str, str]:
    last = trial["status"]["conditions"][-1]
    return last["type"], last["reason"], last["message"]


def intervals(root: Path) -> list[tuple[int, int]]:
    """Every run's (start, end) from the trials' own records."""
    found = []
    for log in root.glob("*/*/times.log"):
        marks = [line.split() for line in log.read_text().splitlines()]
        starts = [int(t) for kind, t in marks if kind == "start"]
        ends = [int(t) for kind, t in marks if kind == "end"]
        found += list(zip(starts, ends, strict=True))
    return found


def most_at_once(spans: list[tuple[int, int]]) -> int:
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


def test_up_to_parallel_trial_count_processes_run_at_once(
    world: tuple[FakeCluster, FakeWorld], tmp_path: Path
) -> None:
    cluster, _ = world
    argv = [sys.executable, "-c", RECORDING, "1", "loss=0.25", "0"]  # each outlasts the starts
    cluster.create(experiment(tmp_path, argv, trials=7, parallel=3))
    running = runtime(world, tmp_path)
    try:
        running.run_until(lambda: completed(cluster), max_steps=2_000)
    finally:
        running.close()
    spans = intervals(tmp_path / "trials")
    assert len(spans) == 7  # every Trial ran once
    assert most_at_once(spans) == 3  # concurrently, never more than parallelTrialCount
    for trial in trials(cluster):
        assert last_condition(trial)[:2] == (
            "Succeeded",
            "TrialSucceeded. Job reason: CompletionsReached",
        )
        assert trial["status"]["observation"]["metrics"][0]["latest"] == "0.25"


def test_a_failing_command_fails_its_trial_with_katibs_reason(
    world: tuple[FakeCluster, FakeWorld], tmp_path: Path
) -> None:
    cluster, _ = world
    argv = [sys.executable, "-c", RECORDING, "0", "oops", "3"]
    manifest = experiment(tmp_path, argv, trials=1, parallel=1, maxFailedTrialCount=1)
    manifest["spec"]["trialTemplate"]["trialSpec"]["spec"]["backoffLimit"] = 1
    cluster.create(manifest)
    running = runtime(world, tmp_path)
    try:
        running.run_until(lambda: completed(cluster), max_steps=2_000)
    finally:
        running.close()
    (trial,) = trials(cluster)
    assert last_condition(trial) == (
        "Failed",
        "TrialFailed. Job reason: BackoffLimitExceeded",
        "Trial has failed. Job message: Job has reached the specified backoff limit",
    )
    assert len(intervals(tmp_path / "trials")) == 2  # the first try and the Job's one retry


def test_a_command_printing_no_metric_is_metrics_unavailable(
    world: tuple[FakeCluster, FakeWorld], tmp_path: Path
) -> None:
    cluster, _ = world
    argv = [sys.executable, "-c", RECORDING, "0", "accuracy=0.9 (not the objective)", "0"]
    cluster.create(experiment(tmp_path, argv, trials=1, parallel=1))
    running = runtime(world, tmp_path)
    try:
        running.run_until(lambda: completed(cluster), max_steps=2_000)
    finally:
        running.close()
    (trial,) = trials(cluster)
    assert last_condition(trial) == (  # at once: the collector reported "unavailable"
        "MetricsUnavailable",
        "MetricsUnavailable. Job reason: CompletionsReached",
        "Metrics are not available. Job message: Reached expected number of succeeded pods",
    )
    metrics = trial["status"]["observation"]["metrics"]
    assert metrics[0] == {
        "name": "loss",
        "min": "unavailable",
        "max": "unavailable",
        "latest": "unavailable",
    }


def test_metrics_nobody_collects_are_unavailable_after_the_bounded_wait(
    world: tuple[FakeCluster, FakeWorld], tmp_path: Path
) -> None:
    cluster, _ = world
    argv = [sys.executable, "-c", RECORDING, "0", "loss=0.25", "0"]
    manifest = experiment(tmp_path, argv, trials=1, parallel=1)
    manifest["spec"]["metricsCollectorSpec"] = {"collector": {"kind": "None"}}
    cluster.create(manifest)
    running = runtime(world, tmp_path)
    try:
        steps = running.run_until(lambda: completed(cluster), max_steps=2_000)
    finally:
        running.close()
    (trial,) = trials(cluster)
    kind, _, message = last_condition(trial)
    assert kind == "MetricsUnavailable"
    assert f"none were reported within {METRICS_WAIT:g}s after the run succeeded" in message
    assert steps > METRICS_WAIT  # it was awaited, then given up on


LEAVES_A_CHILD = (
    "import subprocess, time; p = subprocess.Popen(['sleep', '300']); "
    "open('child.pid', 'w').write(str(p.pid)); time.sleep(300)"
)


def trial_manifest(argv: list[str]) -> Manifest:
    """A Trial made by hand (no Experiment re-creates it when it is deleted)."""
    container = {"name": "training-container", "image": "x", "command": argv}
    pod = {"containers": [container], "restartPolicy": "Never"}
    job = {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": pod}}}
    spec = {"objective": {"type": "minimize", "objectiveMetricName": "loss",
                          "metricStrategies": [{"name": "loss", "value": "min"}]},
            "runSpec": job, "primaryContainerName": "training-container",
            "metricsCollector": {"collector": {"kind": "StdOut"}}}  # fmt: skip
    return {"apiVersion": API_VERSION, "kind": "Trial",
            "metadata": {"name": "by-hand", "namespace": NAMESPACE}, "spec": spec}  # fmt: skip


def child_when_started(running: Runtime, tmp_path: Path) -> int:
    record = tmp_path / "trials" / NAMESPACE / "by-hand" / "child.pid"
    running.run_until(lambda: record.exists() and record.read_text().isdigit(), max_steps=2_000)
    return int(record.read_text())


@needs_proc
def test_a_deleted_trials_process_group_is_stopped(
    world: tuple[FakeCluster, FakeWorld], tmp_path: Path
) -> None:
    cluster, _ = world
    cluster.create(trial_manifest([sys.executable, "-c", LEAVES_A_CHILD]))
    running = runtime(world, tmp_path)
    try:
        child = child_when_started(running, tmp_path)
        trial = cluster.get(ObjectRef(API_VERSION, "Trial", NAMESPACE, "by-hand"))
        cluster.delete(ObjectRef.of(trial), trial["metadata"]["uid"])
        running.run_until(lambda: not cluster.store.all() and not running.busy, max_steps=2_000)
        assert gone_soon(child)  # killed: its exit is the kernel's, a moment later
    finally:
        running.close()


@needs_proc
def test_a_trials_process_group_is_stopped_when_the_command_ends(
    world: tuple[FakeCluster, FakeWorld], tmp_path: Path
) -> None:
    cluster, _ = world
    cluster.create(trial_manifest([sys.executable, "-c", LEAVES_A_CHILD]))
    running = runtime(world, tmp_path)
    child = child_when_started(running, tmp_path)
    running.close()
    assert gone_soon(child) and not running.busy
