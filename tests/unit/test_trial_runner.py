"""The local trial runtime against the fake cluster: metrics, commands, races and lost runners."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake import FakeClock, FakeCluster
from katib_resume.adapters.local.trials import (
    ANNOTATION_ATTEMPTS,
    FLOOR,
    REASON_LOST,
    TrialRunner,
    parse_pairs,
    parse_stdout,
    synthetic_metrics,
)
from katib_resume.app.loop.informer import Informer
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.model.trial import Trial
from katib_resume.core.objective import best_trial, goal_reached
from katib_resume.core.ports import ClusterError, Conflict, NotFound, Unavailable
from katib_resume.core.trial_phases import TrialPhase
from katib_resume.core.trials import classify
from tests.support.delegating import DelegatingCluster

NS = "kubeflow"
OBJECTIVE: dict[str, Any] = {
    "type": "minimize",
    "goal": 0.001,
    "objectiveMetricName": "loss",
    "additionalMetricNames": ["accuracy"],
}


def trial_manifest(
    name: str,
    command: Sequence[str] = ("python3", "/opt/pytorch-mnist/mnist.py", "--lr=0.0123"),
    *,
    namespace: str = NS,
    assignments: Mapping[str, str] | None = None,
) -> Manifest:
    """A Trial as the planner creates it (the contract in the brief)."""
    values = {"lr": "0.0123", "momentum": "0.61"} if assignments is None else assignments
    container = {"name": "training-container", "image": "mnist", "command": list(command)}
    return {
        "apiVersion": API_VERSION,
        "kind": "Trial",
        "metadata": {"name": name, "namespace": namespace, "labels": {LABEL_EXPERIMENT: "exp"}},
        "spec": {
            "parameterAssignments": [{"name": k, "value": v} for k, v in values.items()],
            "objective": OBJECTIVE,
            "primaryContainerName": "training-container",
            "runSpec": {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "spec": {"template": {"spec": {"containers": [container]}}},
            },
        },
    }


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def ref(name: str, namespace: str = NS) -> ObjectRef:
    return ObjectRef(API_VERSION, "Trial", namespace, name)


def read(cluster: FakeCluster, name: str, namespace: str = NS) -> Trial:
    return Trial.model_validate(cluster.get(ref(name, namespace)))


def conditions(trial: Trial) -> list[tuple[str, str, str]]:
    return [(c.type, c.status.value, c.reason) for c in trial.status.conditions]


def metrics(trial: Trial) -> dict[str, dict[str, str]]:
    extra = trial.status.model_extra or {}
    return {m["name"]: m for m in extra["observation"]["metrics"]}


def message(trial: Trial, type_: str) -> str:
    return next(c.message for c in trial.status.conditions if c.type == type_)


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster(FakeClock())


def runner(cluster: Any, tmp_path: Path, **options: Any) -> TrialRunner:
    return TrialRunner(cluster, FakeClock().now, workdir=tmp_path, **options)


def leave_running(cluster: FakeCluster, name: str, attempts: str | None = None) -> None:
    """What a runner that died mid-run leaves behind: a Running Trial, maybe an attempt count."""
    cluster.create(trial_manifest(name))
    if attempts is not None:
        manifest = cluster.get(ref(name))
        manifest["metadata"]["annotations"] = {ANNOTATION_ATTEMPTS: attempts}
        cluster.update(manifest)
    running = [{"type": "Running", "status": "True", "reason": "TrialRunning", "message": "m"}]
    version = cluster.get(ref(name))["metadata"]["resourceVersion"]
    cluster.update_status(ref(name), {"conditions": running}, version)


# --- the synthetic objective -------------------------------------------------------------------


def test_synthetic_metrics_are_a_deterministic_function_of_the_assignments() -> None:
    one = synthetic_metrics({"lr": "0.0123", "momentum": "0.61"}, ["loss", "accuracy"])
    assert one == synthetic_metrics({"lr": "0.0123", "momentum": "0.61"}, ["loss", "accuracy"])
    assert one != synthetic_metrics({"lr": "0.0400", "momentum": "0.61"}, ["loss", "accuracy"])
    assert set(one) == {"loss", "accuracy"} and one["loss"] != one["accuracy"]


values = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(str), st.text(max_size=8))


@given(st.dictionaries(st.text(min_size=1, max_size=8), values, max_size=5))
def test_synthetic_metrics_stay_off_any_tiny_goal(assignments: dict[str, str]) -> None:
    low = synthetic_metrics(assignments, ["loss"], "minimize")["loss"]
    high = synthetic_metrics(assignments, ["accuracy"], "maximize")["accuracy"]
    assert FLOOR <= low <= FLOOR + 1 and 0 < high <= 1 - FLOOR
    assert math.isfinite(low) and math.isfinite(high)


# --- the StdOut collector format ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "pairs"),
    [
        ("loss=0.3", [("loss", "0.3")]),
        ("epoch 1: loss = 0.3 accuracy=0.9", [("loss", "0.3"), ("accuracy", "0.9")]),
        (
            "loss=0.3,accuracy=.9, Validation-accuracy=-1e-2",
            [("loss", "0.3"), ("accuracy", ".9"), ("Validation-accuracy", "-1e-2")],
        ),
        ("loss=nan loss=0.2abc x.loss=4 loss= loss is 0.1 ==> done", []),
        ("{'loss': 0.3}", []),
    ],
)
def test_pairs_of_a_line(line: str, pairs: list[tuple[str, str]]) -> None:
    assert parse_pairs(line) == pairs


def test_stdout_gives_min_max_latest_per_wanted_metric_and_ignores_junk() -> None:
    text = "starting\nloss=0.5 lr=0.1\nTraceback? no\nloss=0.2,accuracy=0.7\nloss=0.30\nbye=1"
    loss, accuracy, f1 = parse_stdout(text, ["loss", "accuracy", "f1"])
    assert (loss.min, loss.max, loss.latest) == ("0.2", "0.5", "0.30")
    assert (accuracy.min, accuracy.max, accuracy.latest) == ("0.7", "0.7", "0.7")
    assert not f1.available and f1.to_dict()["latest"] == "unavailable"


# --- synthetic runs ----------------------------------------------------------------------------


def test_a_pending_trial_runs_to_succeeded_with_synthetic_metrics(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    cluster.create(trial_manifest("exp-aaaaaaaa"))
    trials = runner(cluster, tmp_path)
    assert trials.tick() == 1
    done = read(cluster, "exp-aaaaaaaa")
    assert conditions(done) == [
        ("Created", "True", "TrialCreated"),
        ("Running", "False", "TrialRunning"),
        ("Succeeded", "True", "TrialSucceeded"),
    ]
    assert all(c.last_update_time and c.last_transition_time for c in done.status.conditions)
    expected = synthetic_metrics({"lr": "0.0123", "momentum": "0.61"}, ["loss", "accuracy"])
    loss = metrics(done)["loss"]
    assert loss["min"] == loss["max"] == loss["latest"]
    assert float(loss["latest"]) == pytest.approx(expected["loss"], rel=1e-5)
    assert classify(done) is TrialPhase.SUCCEEDED
    objective = ObjectiveSpec.model_validate(OBJECTIVE)
    assert best_trial(objective, [done]) is not None and not goal_reached(objective, [done])
    assert trials.tick() == 0  # terminal: nothing more to do


def test_an_ended_trial_is_read_again_once_it_changes(cluster: FakeCluster, tmp_path: Path) -> None:
    """An ended Trial is passed over while its version stays; a new version is looked at."""
    cluster.create(trial_manifest("exp-aaaaaaaa"))
    trials = runner(cluster, tmp_path)
    assert trials.tick() == 1
    assert trials.tick() == 0 and trials.tick() == 0  # ended, the same version: nothing
    version = cluster.get(ref("exp-aaaaaaaa"))["metadata"]["resourceVersion"]
    cluster.update_status(ref("exp-aaaaaaaa"), {}, version)  # its outcome wiped: not ended
    assert trials.tick() == 1
    assert classify(read(cluster, "exp-aaaaaaaa")) is TrialPhase.SUCCEEDED


@pytest.mark.parametrize("namespace", [None, NS])
def test_on_a_watch_cache_a_tick_reads_only_changed_and_unended_trials(
    cluster: FakeCluster, tmp_path: Path, namespace: str | None
) -> None:
    """Through an informer (a cache that says what changed) ended Trials are not visited at
    all, however many there are; a Trial that changes is, and one in another namespace is left
    for a tick of its own."""
    informer = Informer(cluster.for_cache())
    parsed: list[str] = []

    def parse(raw: Manifest) -> Trial:
        parsed.append(raw["metadata"]["name"])
        return Trial.model_validate(raw)

    trials = TrialRunner(informer, FakeClock().now, workdir=tmp_path, parse=parse)
    for name in ("exp-aaaaaaaa", "exp-bbbbbbbb"):
        informer.create(trial_manifest(name))
    informer.create(trial_manifest("exp-cccccccc", namespace="other"))
    assert trials.tick(namespace) == (3 if namespace is None else 2)
    assert trials.tick(namespace) == 0  # reads the versions its own writes made, once
    parsed.clear()
    assert trials.tick(namespace) == 0 and parsed == []  # not even the other namespace's
    parsed.clear()
    version = informer.get(ref("exp-aaaaaaaa"))["metadata"]["resourceVersion"]
    cluster.update_status(ref("exp-aaaaaaaa"), {}, version)  # its outcome wiped: not ended
    informer.sync()
    assert trials.tick(NS) == 1 and parsed[0] == "exp-aaaaaaaa"
    assert "exp-bbbbbbbb" not in parsed
    assert classify(read(cluster, "exp-aaaaaaaa")) is TrialPhase.SUCCEEDED
    assert trials.tick() == (0 if namespace is None else 1)  # the other namespace's, once


def test_tick_is_limited_to_the_namespace_given(cluster: FakeCluster, tmp_path: Path) -> None:
    cluster.create(trial_manifest("exp-aaaaaaaa"))
    cluster.create(trial_manifest("exp-bbbbbbbb", namespace="other"))
    trials = runner(cluster, tmp_path)
    assert trials.tick("other") == 1
    assert classify(read(cluster, "exp-aaaaaaaa")) is TrialPhase.PENDING
    assert trials.tick() == 1


# --- command mode ------------------------------------------------------------------------------


def run_one(cluster: FakeCluster, tmp_path: Path, command: Sequence[str], **options: Any) -> Trial:
    cluster.create(trial_manifest("exp-cccccccc", command))
    assert runner(cluster, tmp_path, command=True, **options).tick() == 1
    return read(cluster, "exp-cccccccc")


def test_command_metrics_are_read_from_stdout(cluster: FakeCluster, tmp_path: Path) -> None:
    code = "open('mark', 'w').close(); print('loss=0.5'); print('loss=0.3, accuracy=0.8')"
    done = run_one(cluster, tmp_path, python(code))
    assert classify(done) is TrialPhase.SUCCEEDED
    assert metrics(done)["loss"] == {"name": "loss", "min": "0.3", "max": "0.5", "latest": "0.3"}
    assert metrics(done)["accuracy"]["latest"] == "0.8"
    workdir = tmp_path / NS / "exp-cccccccc"
    assert (workdir / "mark").exists() and "loss=0.3" in (workdir / "stdout.log").read_text()


def test_no_objective_metric_in_the_output_is_metrics_unavailable(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    done = run_one(cluster, tmp_path, python("print('accuracy=0.8 training done')"))
    assert classify(done) is TrialPhase.METRICS_UNAVAILABLE
    assert metrics(done)["loss"]["latest"] == "unavailable"
    assert "loss" in message(done, "MetricsUnavailable")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (python("import sys; print('loss=0.1'); sys.exit('out of memory')"), "exited with code 1"),
        (["/nonexistent/train-xyz", "--lr=0.1"], "executable not found: /nonexistent/train-xyz"),
        (["python3", "--lr=${trialParameters.learningRate}"], "${trialParameters.learningRate}"),
    ],
)
def test_a_failed_command_is_a_failed_trial(
    cluster: FakeCluster, tmp_path: Path, command: list[str], expected: str
) -> None:
    done = run_one(cluster, tmp_path, command)
    assert classify(done) is TrialPhase.FAILED
    assert expected in message(done, "Failed")
    assert ("Failed", "True", "TrialFailed") in conditions(done)


def test_the_exit_message_quotes_stderr(cluster: FakeCluster, tmp_path: Path) -> None:
    done = run_one(cluster, tmp_path, python("import sys; sys.exit('out of memory')"))
    assert message(done, "Failed") == "command exited with code 1: out of memory"


def test_a_command_that_runs_too_long_fails(cluster: FakeCluster, tmp_path: Path) -> None:
    done = run_one(cluster, tmp_path, python("import time; time.sleep(30)"), timeout=0.5)
    assert classify(done) is TrialPhase.FAILED
    assert message(done, "Failed").startswith("command timed out after 0.5s")


def test_a_run_spec_without_the_primary_container_fails(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    manifest = trial_manifest("exp-dddddddd")
    manifest["spec"]["primaryContainerName"] = "main"
    cluster.create(manifest)
    runner(cluster, tmp_path, command=True).tick()
    done = read(cluster, "exp-dddddddd")
    assert classify(done) is TrialPhase.FAILED and "'main'" in message(done, "Failed")


# --- world errors ------------------------------------------------------------------------------


class PortOnly(DelegatingCluster):
    """``core.ports.Cluster`` and nothing more, with faults queued per method (None: no fault)."""

    def __init__(self, inner: FakeCluster) -> None:
        super().__init__(inner)
        self.faults: dict[str, list[ClusterError | None]] = {}

    def _fault(self, method: str) -> None:
        fault = self.faults[method].pop(0) if self.faults.get(method) else None
        if fault is not None:
            raise fault

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        self._fault("list")
        return self.inner.list(api_version, kind, namespace, labels)

    def update(self, manifest: Manifest) -> Manifest:
        self._fault("update")
        return self.inner.update(manifest)

    def update_status(
        self, ref: ObjectRef, status: Manifest, resource_version: str | None
    ) -> Manifest:
        self._fault("update_status")
        return self.inner.update_status(ref, status, resource_version)


class Flaky(PortOnly):
    """The port with faults (kept as a name for the tests that inject them)."""


@pytest.mark.parametrize("error", [Conflict("stale"), NotFound("gone"), Unavailable("503")])
def test_a_failed_start_skips_the_trial_until_the_next_tick(
    cluster: FakeCluster, tmp_path: Path, error: ClusterError
) -> None:
    cluster.create(trial_manifest("exp-aaaaaaaa"))
    flaky = Flaky(cluster)
    flaky.faults["update_status"] = [error]
    trials = runner(flaky, tmp_path)
    assert trials.tick() == 0
    assert classify(read(cluster, "exp-aaaaaaaa")) is TrialPhase.PENDING
    assert trials.tick() == 1
    assert classify(read(cluster, "exp-aaaaaaaa")) is TrialPhase.SUCCEEDED


def test_a_failed_list_advances_nothing(cluster: FakeCluster, tmp_path: Path) -> None:
    cluster.create(trial_manifest("exp-aaaaaaaa"))
    flaky = Flaky(cluster)
    flaky.faults["list"] = [Unavailable("503")]
    assert runner(flaky, tmp_path).tick() == 0


def test_an_outcome_whose_write_lost_a_race_is_written_later_not_rerun(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    code = "open('runs', 'a').write('x'); print('loss=0.25')"
    cluster.create(trial_manifest("exp-aaaaaaaa", python(code)))
    flaky = Flaky(cluster)
    trials = runner(flaky, tmp_path, command=True)
    flaky.faults["update_status"] = [None, Conflict("stale")]  # the start, then the outcome
    assert trials.tick() == 1  # it started and ran, though its outcome is not written yet
    assert classify(read(cluster, "exp-aaaaaaaa")) is TrialPhase.RUNNING
    assert trials.tick() == 1
    done = read(cluster, "exp-aaaaaaaa")
    assert classify(done) is TrialPhase.SUCCEEDED and metrics(done)["loss"]["latest"] == "0.25"
    assert (tmp_path / NS / "exp-aaaaaaaa" / "runs").read_text() == "x"


# --- lost runners ------------------------------------------------------------------------------


def test_a_trial_left_running_by_another_runner_is_rerun_once(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    leave_running(cluster, "exp-aaaaaaaa")
    uid = cluster.get(ref("exp-aaaaaaaa"))["metadata"]["uid"]
    assert runner(cluster, tmp_path).tick() == 1
    done = read(cluster, "exp-aaaaaaaa")
    assert classify(done) is TrialPhase.SUCCEEDED
    assert done.metadata.annotations[ANNOTATION_ATTEMPTS] == "2"
    assert done.metadata.uid == uid and len(cluster.list(API_VERSION, "Trial", None, {})) == 1


def test_a_trial_lost_on_every_attempt_fails_as_trial_lost(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    leave_running(cluster, "exp-aaaaaaaa")
    dying = Flaky(cluster)  # it re-runs the Trial, then "dies": its outcome is never written
    dying.faults["update_status"] = [Unavailable("503")]
    assert runner(dying, tmp_path).tick() == 1
    assert read(cluster, "exp-aaaaaaaa").metadata.annotations[ANNOTATION_ATTEMPTS] == "2"
    assert classify(read(cluster, "exp-aaaaaaaa")) is TrialPhase.RUNNING
    assert runner(cluster, tmp_path).tick() == 1
    lost = read(cluster, "exp-aaaaaaaa")
    assert classify(lost) is TrialPhase.FAILED
    assert ("Failed", "True", REASON_LOST) in conditions(lost)
    assert "2 time(s)" in message(lost, "Failed")


def test_one_attempt_allowed_means_no_rerun(cluster: FakeCluster, tmp_path: Path) -> None:
    leave_running(cluster, "exp-aaaaaaaa")
    assert runner(cluster, tmp_path, max_attempts=1).tick() == 1
    assert ("Failed", "True", REASON_LOST) in conditions(read(cluster, "exp-aaaaaaaa"))


def test_a_lost_claim_is_retried_next_tick(cluster: FakeCluster, tmp_path: Path) -> None:
    leave_running(cluster, "exp-aaaaaaaa")
    flaky = Flaky(cluster)
    flaky.faults["update"] = [Conflict("another runner claimed it")]
    trials = runner(flaky, tmp_path)
    assert trials.tick() == 0
    assert trials.tick() == 1
    assert classify(read(cluster, "exp-aaaaaaaa")) is TrialPhase.SUCCEEDED


def test_max_attempts_must_allow_a_run(cluster: FakeCluster, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        runner(cluster, tmp_path, max_attempts=0)
