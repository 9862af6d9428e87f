"""What the embedded commands do when the machine is in the way, or the Experiment cannot end
the usual way: a state directory that cannot be written, a full disk, a broken lock, a run that
ends Failed, an Experiment with no trial limit beside another."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.adapters.fake import sqlite as journal_module
from katib_resume.adapters.fake.persistence import read
from katib_resume.app.cli.main import main
from katib_resume.core.int32 import INT32_MAX
from tests.support.state_dir import committed
from tests.support.trials import run_instead

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "from-volume-resume.yaml"
NAME, NS = "from-volume-resume", "kubeflow"
EXIT_FAILED = 4


def experiment(tmp_path: Path, file: str = "experiment.yaml", **spec: Any) -> Path:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["spec"].update(spec)
    if "name" in spec:
        manifest["metadata"]["name"] = manifest["spec"].pop("name")
    path = tmp_path / file
    path.write_text(yaml.safe_dump(manifest))
    return path


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if "trials completed" not in line]


@pytest.fixture
def state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    state = tmp_path / "state"
    assert cli(capsys, "run", "-f", EXAMPLE, "--state-dir", state)[0] == 0
    return state


def test_a_lock_that_is_a_directory_is_one_line_and_changes_nothing(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = committed(state)
    (state / ".lock").unlink()
    (state / ".lock").mkdir()
    code, _, err = cli(capsys, "edit", "experiment", NAME, "-n", NS, "--max-trial-count", "20",
                       "--state-dir", state)  # fmt: skip
    assert code == 2
    assert errors(err) == [f"katib-resume: error: {state / '.lock'}: not a file "
                           "(a lock file is expected here); remove it"]  # fmt: skip
    (state / ".lock").rmdir()
    assert committed(state) == before


def test_a_damaged_trial_is_one_line_naming_the_state_for_every_command(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Trial's body is decoded when first read, so its damage shows up in whichever command
    reads it first: each says so in one line (exit 2, as for a state damaged at open); one
    that reads no Trial is not held up."""
    with contextlib.closing(sqlite3.connect(state / "cluster.db")) as db, db:
        (name,) = db.execute("SELECT name FROM objects WHERE kind = 'Trial' LIMIT 1").fetchone()
        db.execute(
            "UPDATE log SET body = '{not json' WHERE kind = 'Trial' AND name = ? AND revision ="
            " (SELECT revision FROM objects WHERE kind = 'Trial' AND name = ?)",
            (name, name),
        )
    edit = ("edit", "experiment", NAME, "--max-trial-count", 20)
    assert cli(capsys, "-n", NS, *edit, "--state-dir", state)[0] == 0  # reads no Trial
    for command in (("get", "trials"), ("describe", "trial", name), ("run", NAME)):
        code, _, err = cli(capsys, "-n", NS, *command, "--state-dir", state)
        assert code == 2, command
        (line,) = errors(err)
        assert line.startswith(f"katib-resume: error: {state}: cannot use the fake cluster's")
        assert f"a stored Trial {name!r} cannot be decoded" in line


def test_a_full_disk_mid_run_is_one_line_and_keeps_what_was_committed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, writes = tmp_path / "state", [0]

    def filling(real: Any) -> Any:
        def write(self: journal_module.Journal, *args: Any) -> None:
            writes[0] += 1
            if writes[0] > 60:  # what SQLite raises on ENOSPC
                raise sqlite3.OperationalError("database or disk is full")
            real(self, *args)

        return write

    for method in ("put", "drop"):  # a change, or a deletion (a finished Job's pod, collected)
        monkeypatch.setattr(
            journal_module.Journal, method, filling(getattr(journal_module.Journal, method))
        )
    code, _, err = cli(capsys, "run", "-f", EXAMPLE, "--state-dir", state)
    assert code == 2
    assert errors(err) == [
        f"katib-resume: error: {state / 'cluster.db'}: cannot write the state: "
        "database or disk is full"
    ]
    monkeypatch.undo()
    kept = read(state)
    assert int(kept.store.version) == 60  # every write before the full disk, none after
    code, out, err = cli(capsys, "run", NAME, "-n", NS, "--state-dir", state)
    assert code == 0, err
    assert "Succeeded=True" in out


def test_a_failed_run_says_why_and_exits_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    template = manifest["spec"]["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]
    run_instead(template["containers"][0], ["sh", "-c", "exit 3"])  # every training run fails
    failing = experiment(
        tmp_path, trialTemplate=manifest["spec"]["trialTemplate"], maxFailedTrialCount=1
    )
    state = tmp_path / "state"
    code, out, err = cli(capsys, "run", "-f", failing, "--trial-command", "--state-dir", state)
    assert code == EXIT_FAILED
    assert "Failed=True (ExperimentFailed)" in out
    assert errors(err)[-1] == (
        f"katib-resume: Experiment {NS}/{NAME} failed: "
        "Experiment has failed because max failed count has reached"
    )


def test_settings_the_service_rejects_fail_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = [{"name": "bogus", "value": "1"}]
    bad = experiment(tmp_path, algorithm={"algorithmName": "random", "algorithmSettings": settings})
    code, _, err = cli(capsys, "run", "-f", bad, "--state-dir", tmp_path / "state")
    assert code == 1  # refused before anything is written (docs/algorithms.md)
    assert errors(err)[-1].endswith(
        "Validation failed: ValidateAlgorithmSettings Error: unknown setting bogus for algorithm"
        " random"
    )
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("field", ["maxTrialCount", "parallelTrialCount", "maxFailedTrialCount"])
def test_counts_above_int32_are_denied_at_admission(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str
) -> None:
    counts: dict[str, Any] = {"maxTrialCount": INT32_MAX} | {field: INT32_MAX + 1}
    path = experiment(tmp_path, **counts)
    code, _, err = cli(capsys, "run", "-f", path, "--state-dir", tmp_path / "state")
    assert code == 1
    assert f"spec.{field}: Invalid value: {INT32_MAX + 1}: must be less than or equal to " in err


def test_an_endless_experiment_says_so_and_never_holds_up_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    endless = experiment(tmp_path, maxTrialCount=None, maxFailedTrialCount=None)
    with stopped_after(seconds=3) as stop:  # Ctrl-C, once it has run for a while
        code, _, err = stop(lambda: cli(capsys, "run", "-f", endless, "--state-dir", state))
    assert code == 130
    assert errors(err)[0] == (
        f"katib-resume: Experiment {NS}/{NAME} has no maxTrialCount: it runs until its goal, "
        "its maxFailedTrialCount or Ctrl-C"
    )
    other = experiment(tmp_path, "other.yaml", name="other", maxTrialCount=4)
    code, out, err = cli(capsys, "run", "-f", other, "--state-dir", state)
    assert code == 0, err
    assert f"Experiment {NS}/other: Succeeded=True" in out
    code, out, err = cli(capsys, "delete", "experiment", "other", "-n", NS, "--state-dir", state)
    assert code == 0, err
    endless_trials = [t for t in read(state).list("kubeflow.org/v1beta1", "Trial", NS, {})
                      if t["metadata"]["name"].startswith(f"{NAME}-")]  # fmt: skip
    assert endless_trials  # it ran, and stays where Ctrl-C left it


@contextlib.contextmanager
def stopped_after(seconds: float) -> Iterator[Any]:
    """Call something that runs until interrupted, and interrupt it (as Ctrl-C) after a while."""
    import signal

    def alarm(_number: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield lambda call: call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- real file systems: a read-only and a full one (needs a tmpfs this process may mount) ------


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


def read_only(path: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True)


def test_a_read_only_state_directory_is_one_line_and_readers_still_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with tmpfs(tmp_path / "mnt", "8m") as mount:
        state = mount / "state"
        assert cli(capsys, "run", "-f", EXAMPLE, "--state-dir", state)[0] == 0
        before = committed(state)
        read_only(mount)
        code, _, err = cli(capsys, "run", NAME, "-n", NS, "--state-dir", state)
        assert (code, errors(err)) == (2, [f"katib-resume: error: {state / '.lock'}: "
                                           "Read-only file system"])  # fmt: skip
        code, _, err = cli(capsys, "run", "-f", EXAMPLE, "--state-dir", mount / "new" / "state")
        assert (code, errors(err)) == (2, [f"katib-resume: error: {mount / 'new'}: "
                                           "Read-only file system"])  # fmt: skip
        code, out, _ = cli(capsys, "get", "experiments", "-n", NS, "--state-dir", state)
        assert code == 0 and NAME in out
        assert committed(state) == before


def test_a_really_full_disk_is_one_line_and_the_state_still_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with tmpfs(tmp_path / "mnt", "300k") as mount:
        state = mount / "state"
        path = experiment(tmp_path, maxTrialCount=2000)
        code, _, err = cli(capsys, "run", "-f", path, "--state-dir", state)
        assert code == 2
        assert errors(err) == [f"katib-resume: error: {state / 'cluster.db'}: cannot write the "
                               "state: database or disk is full"]  # fmt: skip
        assert read(state).list("kubeflow.org/v1beta1", "Experiment", NS, {})  # what was committed
