"""An exhausted search completes the Experiment (Katib's ``ExperimentSuggestionEndReached``).

Katib's Experiment controller has the rule but never reaches it, and its grid service hands out
cells again once every cell was issued (the Katib bugs in ``docs/katib-differences.md``). Here a
grid with fewer cells than ``maxTrialCount`` runs every cell once and the Experiment succeeds,
not restartable, with Katib's message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.adapters.fake.persistence import read
from katib_resume.app.cli.main import main
from katib_resume.core.actions import ObjectRef

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
CELLS = 4  # 2 x 2


def grid_experiment(tmp_path: Path, max_trials: int) -> Path:
    experiment: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    spec = experiment["spec"]
    spec["algorithm"] = {"algorithmName": "grid"}
    spec["maxTrialCount"], spec["parallelTrialCount"] = max_trials, 2
    spec["parameters"] = [
        {"name": "lr", "parameterType": "categorical", "feasibleSpace": {"list": ["0.01", "0.02"]}},
        {"name": "momentum", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "2"}},
    ]
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return path


def test_an_exhausted_grid_completes_the_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    code = main(["run", "-f", str(grid_experiment(tmp_path, 10)), "--state-dir", str(state)])
    out, err = capsys.readouterr()
    assert code == 0, err
    cluster = read(state)
    ns, name = "kubeflow", "from-volume-resume"
    experiment = cluster.get(ObjectRef("kubeflow.org/v1beta1", "Experiment", ns, name))
    succeeded = [c for c in experiment["status"]["conditions"] if c["type"] == "Succeeded"]
    assert [(c["status"], c["reason"], c["message"]) for c in succeeded] == [
        (
            "True",
            "ExperimentSuggestionEndReached",
            "Experiment has succeeded because suggestion service has reached the end",
        )
    ]
    trials = cluster.list("kubeflow.org/v1beta1", "Trial", ns, {})
    cells = {
        tuple(sorted((a["name"], a["value"]) for a in t["spec"]["parameterAssignments"]))
        for t in trials
    }
    assert len(trials) == len(cells) == CELLS  # every cell once, none again
    assert "Succeeded=True" in out
    assert err.splitlines()[0] == (  # said when it starts: Katib's service refuses such a run
        f"katib-resume: Experiment {ns}/{name} searches a grid of {CELLS} cells, fewer than its"
        " maxTrialCount 10: it succeeds once every cell has run"
    )


def test_a_grid_as_large_as_its_budget_says_nothing_of_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    code = main(["run", "-f", str(grid_experiment(tmp_path, CELLS)), "--state-dir", str(state)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "cells" not in err
