"""A ``run`` killed for real, at any moment, loses at most the write in flight: ``kill -9`` mid-way
through an Experiment, run it again, and it finishes with every Trial once and the same claim."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from katib_resume.adapters.fake import FakeCluster
from katib_resume.adapters.fake.persistence import STATE_FILE, read
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from tests.support.pids import alive, gone_soon
from tests.support.trials import run_instead

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "from-volume-resume.yaml"
NAME, NS, TRIALS = "from-volume-resume", "kubeflow", 400
PVC = ObjectRef("v1", "PersistentVolumeClaim", NS, f"{NAME}-random")


def start(*args: object) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "katib_resume.app.cli.main", *(str(a) for a in args)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def trials_committed(state: Path) -> int:
    """Trials in the database, as another process sees them (0 before it exists)."""
    if not (state / STATE_FILE).exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{state / STATE_FILE}?mode=ro", uri=True)
        try:
            (count,) = db.execute("SELECT count(*) FROM objects WHERE kind = 'Trial'").fetchone()
        finally:
            db.close()
    except sqlite3.OperationalError:  # the schema is being created
        return 0
    return int(count)


def kill_when(process: subprocess.Popen[str], state: Path, trials: int, sig: int) -> str:
    """Send ``sig`` once ``trials`` Trials are committed; what the process said on stderr."""
    deadline = time.monotonic() + 60
    while trials_committed(state) < trials:
        assert process.poll() is None, f"the run ended before {trials} trials: {process.stderr}"
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.005)
    os.kill(process.pid, sig)
    _, err = process.communicate(timeout=60)
    return err


@pytest.fixture
def experiment(tmp_path: Path) -> Path:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["spec"]["maxTrialCount"] = TRIALS
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(manifest))
    return path


@pytest.mark.parametrize("at", [1, 40])
def test_kill_9_mid_run_then_a_rerun_finishes_with_every_trial_once(
    experiment: Path, tmp_path: Path, at: int
) -> None:
    state = tmp_path / "state"
    running = start("run", "-f", experiment, "--state-dir", state)
    kill_when(running, state, at, signal.SIGKILL)
    assert running.returncode == -signal.SIGKILL
    before = read(state)
    claim_uid = before.get(PVC)["metadata"]["uid"]
    kept = {t["metadata"]["name"]: t["metadata"]["uid"] for t in trials(before)}
    assert at <= len(kept) < TRIALS  # killed mid-run, with what it had committed kept
    rerun = start("run", NAME, "-n", NS, "--state-dir", state)
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    after = read(state)
    final = trials(after)
    names = [t["metadata"]["name"] for t in final]
    assert len(names) == len(set(names)) == TRIALS  # no Trial twice, none missing
    uids = {t["metadata"]["name"]: t["metadata"]["uid"] for t in final}
    assert {name: uids[name] for name in kept} == kept  # the same objects as before the kill
    assignments = after.get(ObjectRef(API_VERSION, "Suggestion", NS, NAME))
    assert sorted(s["name"] for s in assignments["status"]["suggestions"]) == sorted(names)
    assert after.get(PVC)["metadata"]["uid"] == claim_uid
    assert "Succeeded=True" in out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_stop_a_run_as_ctrl_c_does(
    experiment: Path, tmp_path: Path, sig: int
) -> None:
    state = tmp_path / "state"
    running = start("run", "-f", experiment, "--state-dir", state)
    err = kill_when(running, state, 10, sig)
    assert running.returncode == 130, err
    assert err.endswith("katib-resume: interrupted\n")
    committed = len(trials(read(state)))
    assert 10 <= committed < TRIALS
    with sqlite3.connect(state / STATE_FILE) as db:  # closed cleanly: the world was saved
        (world,) = db.execute("SELECT world FROM state").fetchone()
    assert world is not None


def trials(cluster: FakeCluster) -> list[Manifest]:
    return list(cluster.list(API_VERSION, "Trial", NS, {}))


SCRIPT = (
    "if [ -e {marker} ]; then echo loss=0.5; exit 0; fi; touch {marker}; "
    "sleep 300 & echo $! > grandchild.pid; echo $$ > child.pid; wait"
)
"""The first trial's first attempt never ends and leaves a grandchild; every later one succeeds."""


def command_experiment(tmp_path: Path) -> Path:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["spec"].update(maxTrialCount=2, parallelTrialCount=1, maxFailedTrialCount=1)
    job = manifest["spec"]["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]
    run_instead(job["containers"][0], ["sh", "-c", SCRIPT.format(marker=tmp_path / "ran")])
    path = tmp_path / "command.yaml"
    path.write_text(yaml.safe_dump(manifest))
    return path


def pids_when_started(process: subprocess.Popen[str], state: Path) -> tuple[int, int]:
    deadline = time.monotonic() + 60
    while not list(state.glob("trials/**/grandchild.pid")) or not list(
        state.glob("trials/**/child.pid")
    ):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.05)  # both files written in full
    child = int(next(state.glob("trials/**/child.pid")).read_text())
    grandchild = int(next(state.glob("trials/**/grandchild.pid")).read_text())
    return child, grandchild


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_trial_process_group_is_stopped_with_the_command(tmp_path: Path) -> None:
    state = tmp_path / "state"
    running = start(
        "run", "-f", command_experiment(tmp_path), "--trial-command", "--state-dir", state
    )
    child, grandchild = pids_when_started(running, state)
    running.send_signal(signal.SIGTERM)
    _, err = running.communicate(timeout=60)
    assert running.returncode == 130, err
    assert gone_soon(child) and gone_soon(grandchild)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_after_kill_9_the_rerun_stops_what_the_trial_left_then_runs_it_once(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    running = start(
        "run", "-f", command_experiment(tmp_path), "--trial-command", "--state-dir", state
    )
    child, grandchild = pids_when_started(running, state)
    running.kill()
    running.communicate(timeout=60)
    assert gone_soon(child)  # the kernel's SIGKILL when its parent died
    assert alive(grandchild)  # out of reach of a dead parent: the rerun's to stop
    rerun = start("run", NAME, "-n", NS, "--trial-command", "--state-dir", state)
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    assert not alive(grandchild)
    assert len(trials(read(state))) == 2 and "Succeeded=True" in out


def test_get_from_another_terminal_reads_the_run_as_it_goes(tmp_path: Path) -> None:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    del manifest["spec"]["maxTrialCount"]  # it runs until stopped, so the reader meets it running
    endless = tmp_path / "endless.yaml"
    endless.write_text(yaml.safe_dump(manifest))
    state = tmp_path / "state"
    running = start("run", "-f", endless, "--state-dir", state)
    try:
        deadline = time.monotonic() + 60
        while trials_committed(state) < 5:
            assert running.poll() is None and time.monotonic() < deadline
            time.sleep(0.005)
        seen = start("get", "trials", "-n", NS, "--state-dir", state)
        out, err = seen.communicate(timeout=60)
        assert seen.returncode == 0, err
        rows = [line for line in out.splitlines() if line.startswith(f"{NAME}-")]
        assert len(rows) >= 5  # the run's committed Trials
        assert running.poll() is None  # while it runs: the reader did not wait for its lock
    finally:
        running.kill()
        running.communicate(timeout=60)


GROUP = """
import os, pathlib, signal, subprocess, sys, time
runs, marker = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def note(kind, *_):
    with runs.open("a") as out:
        out.write(f"{kind} {time.time_ns()}\\n")
if marker.exists():
    note("start"); note("end"); print("loss=0.5"); sys.exit(0)
marker.touch(); note("start")
last = "import signal, sys, time; from pathlib import Path; " + (
    "signal.signal(signal.SIGTERM, lambda *_: (Path(sys.argv[1]).open('a').write("
    "f'end {time.time_ns()}\\\\n'), sys.exit(0))); time.sleep(300)")
child = subprocess.Popen([sys.executable, "-c", last, str(runs)])
pathlib.Path("grandchild.pid").write_text(str(child.pid))
pathlib.Path("child.pid").write_text(str(os.getpid()))
time.sleep(300)
"""
"""The first attempt leaves a process that notes when it is stopped; the second one succeeds."""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_after_kill_9_the_rerun_never_runs_the_trial_twice_at_once(tmp_path: Path) -> None:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["spec"].update(maxTrialCount=1, parallelTrialCount=1, maxFailedTrialCount=1)
    job = manifest["spec"]["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]
    runs, marker = tmp_path / "runs.log", tmp_path / "ran"
    run_instead(job["containers"][0], [sys.executable, "-c", GROUP, str(runs), str(marker)])
    path = tmp_path / "group.yaml"
    path.write_text(yaml.safe_dump(manifest))
    state = tmp_path / "state"
    running = start("run", "-f", path, "--trial-command", "--state-dir", state)
    _, grandchild = pids_when_started(running, state)
    running.kill()
    running.communicate(timeout=60)
    assert alive(grandchild)
    rerun = start("run", NAME, "-n", NS, "--trial-command", "--state-dir", state)
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    marks = [line.split() for line in runs.read_text().splitlines()]
    kinds = [kind for kind, _ in sorted(marks, key=lambda mark: int(mark[1]))]
    assert kinds == ["start", "end", "start", "end"]  # the first group ended before the rerun ran
    assert "Succeeded=True" in out
