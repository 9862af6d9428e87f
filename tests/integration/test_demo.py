"""``katib-resume demo``: the narrated resume story, fast, and checked by itself.

The demo prints claims with their evidence; these tests hold it to the key ones (from a real
process) and prove that a false claim stops it with exit status 3 instead of being printed. How
long it takes is not asserted: a wall time on a shared machine is a figure, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from katib_resume.app.cli import demo as cmd_demo

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = (
    "12 trials in",
    "PersistentVolumeClaim from-volume-resume-random: storage class katib-suggestion, Bound",
    "PersistentVolume from-volume-resume-random-kubeflow: type=local, hostPath "
    "/tmp/katib/suggestions/from-volume-resume-random-kubeflow, pre-bound to its claim",
    "its Deployment and Service are gone, its volume and its directory are kept",
    "PersistentVolumeClaim from-volume-resume-random, UID ",
    "maxTrialCount 10 is denied, 20 is allowed (maxTrialCount 12 -> 20)",
    "must be greater than status.trials count",
    "Deployment from-volume-resume-random: comes back (new UID",
    "PersistentVolumeClaim from-volume-resume-random: reused, same UID",
    "PersistentVolume from-volume-resume-random-kubeflow: reused, same UID",
    "mounted the same directory",
    "suggestion state restored from ",
    "(12 assignments)",
    "trials 13-20 continued the sequence",
    "made exactly the same 20 assignments in the same order",
    "nothing is left in the cluster, and the volume is gone",
    "removed PersistentVolume from-volume-resume-random-kubeflow",
    "removed volume directory ",
    "every claim above was checked",
)


def test_the_demo_tells_the_whole_story(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "katib_resume", "demo"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for claim in CLAIMS:
        assert claim in done.stdout, claim
    assert not (tmp_path / ".katib-resume").exists()  # the demo uses a temporary directory


@pytest.fixture(scope="module")
def out() -> str:
    """What one in-process run of the demo printed (it succeeded)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert cmd_demo.demo(argparse.Namespace()) == 0
    return printed.getvalue()


def _word_after(out: str, marker: str) -> str:
    """The word the demo printed right after ``marker`` (which it must have printed)."""
    _, found, rest = out.partition(marker)
    assert found, marker
    return rest.split(maxsplit=1)[0]


def test_the_pvc_uid_is_the_same_before_and_after_the_resume(out: str) -> None:
    kept = _word_after(out, "PersistentVolumeClaim from-volume-resume-random, UID ")
    assert f"PersistentVolumeClaim from-volume-resume-random: reused, same UID {kept}" in out


def test_one_directory_from_the_first_run_to_the_deletion(out: str) -> None:
    directory = _word_after(out, "on this machine the simulated node keeps it in ")
    assert directory.endswith(
        "/volumes/host/tmp/katib/suggestions/from-volume-resume-random-kubeflow"
    )
    listed = out.split(f"directory {directory}: ", 1)[1].splitlines()[0].split(", ")
    assert "suggestion-state.json" in listed  # kept through completion (with its journal)
    assert f"suggestion state restored from {directory}/suggestion-state.json" in out
    assert f"removed volume directory {directory}" in out


def test_a_false_claim_stops_the_demo_with_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cmd_demo, "FIRST", 11)
    assert cmd_demo.demo(argparse.Namespace()) == 3
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        "katib-resume: demo: this claim turned out false: the first run made 11 trials (it made 12)"
    )
    assert "every claim above was checked" not in captured.out


def test_the_packaged_examples_are_katibs_examples() -> None:
    for name in ("from-volume-resume.yaml", "long-running-resume.yaml"):
        packaged = (ROOT / "app" / "data" / name).read_text()
        assert packaged == (ROOT / "examples" / name).read_text()


def test_the_tests_data_is_what_ships() -> None:
    """The tests read ``tests/data`` (``tests.support.harness.load``) for the examples and the
    katib-config that ship in ``examples/`` and ``app/data``."""
    for name in ("from-volume-resume.yaml", "long-running-resume.yaml", "katib-config.yaml"):
        shipped = (ROOT / "app" / "data" / name).read_bytes()
        assert (ROOT / "tests" / "data" / name).read_bytes() == shipped, name
