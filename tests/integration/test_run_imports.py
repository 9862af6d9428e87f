"""A ``run`` imports Optuna only for an algorithm that searches with it.

Optuna (with NumPy and tqdm, which it imports) is about 0.13 s and 20 MB of every process that
imports it; ``random``, ``grid``, ``hyperband`` and ``pbt`` are written by hand and never ask it
for anything, so a ``run`` of one of them starts without it. Each case runs the from-volume
example, its algorithm changed, to completion in a fresh process and reads which of the search
libraries the process imported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
LIBRARIES = ("optuna", "numpy", "scipy", "sklearn")


def imported_by_run(tmp_path: Path, algorithm: str) -> list[str]:
    experiment = yaml.safe_load(EXAMPLE.read_text())
    experiment["spec"]["algorithm"] = {"algorithmName": algorithm}
    experiment["spec"]["maxTrialCount"] = 4
    for parameter in experiment["spec"]["parameters"]:
        parameter["feasibleSpace"]["step"] = "0.01"  # grid needs a step; the others ignore it
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    argv = ["run", "-f", str(path), "--state-dir", str(tmp_path / "state")]
    probe = (
        "import contextlib, io, sys; from katib_resume.app.cli.main import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()): code = main({argv!r})\n"
        f"print(code, *sorted(m for m in {LIBRARIES!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    code, *libraries = done.stdout.split()
    assert code == "0", done.stdout
    return libraries


@pytest.mark.parametrize("algorithm", ["random", "grid"])
def test_a_run_of_a_hand_written_algorithm_imports_no_search_library(
    tmp_path: Path, algorithm: str
) -> None:
    assert imported_by_run(tmp_path, algorithm) == []


def test_a_run_of_an_optuna_algorithm_imports_optuna(tmp_path: Path) -> None:
    """The probe sees an import when there is one."""
    assert "optuna" in imported_by_run(tmp_path, "tpe")


def test_the_hand_written_searches_and_the_server_import_no_search_library() -> None:
    """``hyperband``, ``pbt`` and ``medianstop`` (whose Experiments need settings this file's
    runs do not write) are modules Optuna is not imported by, nor is the server that runs them."""
    modules = ["hyperband", "pbt", "medianstop", "server", "algorithms"]
    imports = "; ".join(f"import katib_resume.adapters.local.suggestion.{m}" for m in modules)
    probe = f"import sys; {imports}; print(*sorted(m for m in {LIBRARIES!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.split() == []
