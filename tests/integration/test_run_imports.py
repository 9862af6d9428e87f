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

from tests.support.imports import ROOT, SEARCH_LIBRARIES, imported_by

EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"


def imported_by_run(tmp_path: Path, algorithm: str) -> list[str]:
    experiment = yaml.safe_load(EXAMPLE.read_text())
    experiment["spec"]["algorithm"] = {"algorithmName": algorithm}
    experiment["spec"]["maxTrialCount"] = 4
    for parameter in experiment["spec"]["parameters"]:
        parameter["feasibleSpace"]["step"] = "0.01"  # grid needs a step; the others ignore it
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    code, libraries = imported_by(["run", "-f", str(path), "--state-dir", str(tmp_path / "s")])
    assert code == 0
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
    found = f"sorted(m for m in {SEARCH_LIBRARIES!r} if m in sys.modules)"
    probe = f"import sys; {imports}; print(*{found})"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.split() == []
