"""Writing commands while a ``run`` holds the state directory: handed over, never refused.

Real processes, as a user has two terminals: a ``run`` of an Experiment with no trial limit holds
the directory, and ``run -f`` of another Experiment, ``edit``, ``edit --dry-run`` and ``delete``
are done by it and answered (``app/cli/serving.py``, ``app/cli/handover.py``); a handed-over
``run`` goes on by itself when the holder ends first, and Ctrl-C in it has the holder stop
advancing its Experiment.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
NS = "kubeflow"
COMMAND = [sys.executable, "-m", "katib_resume"]
TRACE = Path(__file__).resolve().parent / "signal_trace"
HANDED = "is in use by another command: handed over to it (or done here once it ends)"


def experiment(tmp_path: Path, name: str, **spec: object) -> Path:
    """The from-volume example under another name; ``maxTrialCount=None`` drops the limit."""
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["metadata"]["name"] = name
    for key, value in spec.items():
        if value is None:
            manifest["spec"].pop(key, None)
        else:
            manifest["spec"][key] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(manifest))
    return path


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*COMMAND, *map(str, args)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    return done


def started(*args: str | Path, err: Path) -> subprocess.Popen[str]:
    """The command, its stderr into ``err``, and where a SIGINT lands into ``err``'s
    ``.signals`` file (``signal_trace``)."""
    path = [str(TRACE), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    env["KATIB_RESUME_TEST_SIGNALS"] = str(err.with_suffix(".signals"))
    with err.open("w") as sink:
        return subprocess.Popen(
            [*COMMAND, *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
            cwd=ROOT,
            env=env,
        )


def wait_for(path: Path, text: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text():
        assert time.monotonic() < deadline, f"{text!r} never came: {path.read_text()[-2000:]}"
        time.sleep(0.05)


def ended(process: subprocess.Popen[str], err: Path, timeout: float = 60) -> int:
    """The exit status of ``process`` once it ends; a failure that shows the end of what it
    wrote on ``err`` if it has not ended in ``timeout`` seconds (then it is killed)."""
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail(f"still running after {timeout} s; {_trace(err)}")


def _trace(err: Path) -> str:
    """The end of what a process said on ``err``, and where its SIGINTs landed."""
    signals = err.with_suffix(".signals")
    landed = signals.read_text() if signals.exists() else "(no SIGINT reached Python)\n"
    return f"its stderr ends: {err.read_text()[-2000:]}\nits SIGINTs landed: {landed[-3000:]}"


def trials(state: Path, name: str) -> int:
    done = cli("get", "experiment", name, "-n", NS, "--state-dir", state, "-o", "json")
    assert done.returncode == 0, done.stderr
    return int(json.loads(done.stdout).get("status", {}).get("trials", 0))


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path, Path]]:
    """A ``run`` of an Experiment with no trial limit, holding ``tmp_path/state``."""
    state, err = tmp_path / "state", tmp_path / "holder.err"
    endless = experiment(tmp_path, "endless", maxTrialCount=None)
    process = started("run", "-f", endless, "--state-dir", state, err=err)
    try:
        wait_for(err, "trials completed")
        yield process, state, err
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail(f"still running 60 s after its SIGINT; {_trace(err)}")


def test_other_commands_are_done_by_the_run_holding_the_directory(
    tmp_path: Path, holder: tuple[subprocess.Popen[str], Path, Path]
) -> None:
    process, state, err = holder
    other = experiment(tmp_path, "other", maxTrialCount=6)
    done = cli("run", "-f", other, "--state-dir", state)
    assert done.returncode == 0, done.stderr
    assert HANDED in done.stderr
    assert "Experiment kubeflow/other: Succeeded=True (ExperimentMaxTrialsReached)" in done.stdout
    assert done.stdout.count("Succeeded\n") == 6
    assert trials(state, "other") == 6

    denied = cli("edit", "experiment", "other", "-n", NS, "--max-trial-count", "2",
                 "--state-dir", state)  # fmt: skip
    assert denied.returncode == 1
    assert "must be greater than status.trials count" in denied.stderr
    dry = cli("edit", "experiment", "other", "-n", NS, "--max-trial-count", "8", "--dry-run",
              "--state-dir", state)  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert f"dry run: {state} is unchanged" in dry.stdout
    edited = cli("edit", "experiment", "other", "-n", NS, "--max-trial-count", "8",
                 "--state-dir", state)  # fmt: skip
    assert edited.returncode == 0, edited.stderr
    assert "maxTrialCount 6 -> 8" in edited.stdout
    again = cli("run", "other", "-n", NS, "--state-dir", state)
    assert again.returncode == 0, again.stderr
    assert trials(state, "other") == 8  # the holder restarted it and ran the two more

    applied = cli(
        "apply", "-f", experiment(tmp_path, "kept", maxTrialCount=6), "--state-dir", state
    )
    assert applied.returncode == 0, applied.stderr
    assert "experiment.kubeflow.org/kept created" in applied.stdout
    removed = cli("delete", "experiment", "other", "-n", NS, "--state-dir", state)
    assert removed.returncode == 0, removed.stderr
    assert 'experiment.kubeflow.org "other" deleted' in removed.stdout
    assert cli("get", "experiment", "other", "-n", NS, "--state-dir", state).returncode == 1
    assert process.poll() is None  # the holder goes on with its own
    before = trials(state, "endless")
    wait_for(err, f"kubeflow/endless: {before + 3}/")
    assert trials(state, "kept") == 0  # applied, not run: only a run advances it
    said = err.read_text()  # the holder says what it did for others, in its own terminal
    assert "katib-resume: advancing kubeflow/other too, for another command (pid " in said
    assert "katib-resume: no longer advancing kubeflow/other: completed, reported to its " in said
    assert "katib-resume: did `edit experiment other` for another command (pid " in said


def test_what_the_holder_cannot_do_as_the_command_alone_would_is_refused(
    tmp_path: Path, holder: tuple[subprocess.Popen[str], Path, Path]
) -> None:
    _, state, _ = holder
    other = experiment(tmp_path, "other", maxTrialCount=6)
    done = cli("run", "-f", other, "--trial-command", "--state-dir", state)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"katib-resume: error: {state}: the run using it runs its Trials as simulated "
        "containers; run this one without --trial-command, or once it ends"
    )
    config = tmp_path / "katib-config.yaml"
    config.write_text((state / "katib-config.yaml").read_text() + "\n# another\n")
    done = cli("run", "-f", other, "--config", config, "--state-dir", state)
    assert done.returncode == 2
    assert "keeps its katib-config" in done.stderr
    assert cli("get", "experiment", "other", "-n", NS, "--state-dir", state).returncode == 1
    denied = cli("run", "-f", experiment(tmp_path, "bad", parallelTrialCount=0),
                 "--state-dir", state)  # fmt: skip
    assert denied.returncode == 1, denied.stderr


def followed(tmp_path: Path, state: Path, limit: int) -> tuple[subprocess.Popen[str], Path]:
    """A ``run -f`` of the Experiment ``long`` handed over to the holder, once it reports that
    the holder advances it; and the file of its stderr."""
    err = tmp_path / "follower.err"
    follower = started("run", "-f", experiment(tmp_path, "long", maxTrialCount=limit),
                       "--state-dir", state, err=err)  # fmt: skip
    wait_for(err, "kubeflow/long: ")
    return follower, err


def test_a_handed_over_run_goes_on_by_itself_when_the_holder_ends(
    tmp_path: Path, holder: tuple[subprocess.Popen[str], Path, Path]
) -> None:
    process, state, holder_err = holder
    follower, err = followed(tmp_path, state, 1000)
    process.send_signal(signal.SIGTERM)
    assert ended(process, holder_err) == 130
    out, _ = follower.communicate(timeout=120)
    assert follower.returncode == 0, err.read_text()[-2000:]
    assert "the command advancing kubeflow/long ended: continuing it here" in err.read_text()
    assert "Experiment kubeflow/long: Succeeded=True" in out
    assert trials(state, "long") == 1000


def test_ctrl_c_in_a_handed_over_run_stops_its_experiment_only(
    tmp_path: Path, holder: tuple[subprocess.Popen[str], Path, Path]
) -> None:
    process, state, holder_err = holder
    follower, follower_err = followed(tmp_path, state, 100000)
    follower.send_signal(signal.SIGINT)
    assert ended(follower, follower_err) == 130
    time.sleep(1.0)  # its Trials in flight finish; nothing new is started for it
    stopped = trials(state, "long")
    before = trials(state, "endless")
    wait_for(holder_err, f"kubeflow/endless: {before + 6}/")
    assert trials(state, "long") == stopped
    assert process.poll() is None


def test_deleting_the_holders_own_experiment_ends_its_run(
    holder: tuple[subprocess.Popen[str], Path, Path],
) -> None:
    process, state, err = holder
    removed = cli("delete", "experiment", "endless", "-n", NS, "--state-dir", state)
    assert removed.returncode == 0, removed.stderr
    assert ended(process, err) == 1
    assert err.read_text().splitlines()[-1] == (
        'Error from server (NotFound): experiments.kubeflow.org "endless" not found: '
        "deleted while it ran"
    )


def test_requests_made_at_once_are_each_done_once(
    tmp_path: Path, holder: tuple[subprocess.Popen[str], Path, Path]
) -> None:
    process, state, _ = holder
    runs = [
        started(
            "run",
            "-f",
            experiment(tmp_path, name, maxTrialCount=6),
            "--state-dir",
            state,
            err=tmp_path / f"{name}.err",
        )
        for name in ("first", "second", "third")
    ]
    edit = cli("edit", "experiment", "endless", "-n", NS, "--max-trial-count", "900000",
               "--state-dir", state)  # fmt: skip
    assert edit.returncode == 0, edit.stderr
    for name, run in zip(("first", "second", "third"), runs, strict=True):
        out, _ = run.communicate(timeout=120)
        assert run.returncode == 0, (tmp_path / f"{name}.err").read_text()
        assert f"Experiment kubeflow/{name}: Succeeded=True" in out
        assert trials(state, name) == 6
    assert process.poll() is None
    assert not (state / "inbox.db").exists() or not sqlite_rows(state / "inbox.db")


def sqlite_rows(path: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT id, state FROM requests").fetchall()
    finally:
        db.close()
