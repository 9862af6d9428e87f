"""An exhausted search completes the Experiment (Katib's ``ExperimentSuggestionEndReached``).

Katib's Experiment controller has the rule but never reaches it, and its grid service hands out
cells again once every cell was issued, its random one points again at any time (the Katib bugs
in ``docs/katib-differences.md``). Here a grid, or a random search, of fewer points than
``maxTrialCount`` runs every point once and the Experiment succeeds, not restartable, with
Katib's message, whatever ``parallelTrialCount`` (the last points may come in one answer with
the service's "no more", or be recorded a reconcile before their Trials are created: they run
before the Experiment ends).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.adapters.fake.persistence import read
from katib_resume.app.cli.main import main
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
CELLS = 4  # 2 x 2
NAME = "kubeflow/from-volume-resume"


def grid_experiment(
    tmp_path: Path, max_trials: int, algorithm: str = "grid", parallel: int = 2
) -> Path:
    experiment: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    spec = experiment["spec"]
    spec["algorithm"] = {"algorithmName": algorithm}
    spec["maxTrialCount"], spec["parallelTrialCount"] = max_trials, parallel
    spec["parameters"] = [
        {"name": "lr", "parameterType": "categorical", "feasibleSpace": {"list": ["0.01", "0.02"]}},
        {"name": "momentum", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "2"}},
    ]
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return path


def ended(state: Path) -> Sequence[Manifest]:
    """The Experiment's Trials, once it ended with ``ExperimentSuggestionEndReached``."""
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
    return cluster.list("kubeflow.org/v1beta1", "Trial", ns, {})


def points_of(trials: Sequence[Manifest]) -> set[tuple[tuple[str, str], ...]]:
    return {
        tuple(sorted((a["name"], a["value"]) for a in t["spec"]["parameterAssignments"]))
        for t in trials
    }


@pytest.mark.parametrize("algorithm", ["grid", "random"])
@pytest.mark.parametrize("parallel", [1, 3, 4, 6])
def test_an_exhausted_search_runs_every_point_then_completes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], algorithm: str, parallel: int
) -> None:
    path = grid_experiment(tmp_path, 10, algorithm, parallel)
    code = main(["run", "-f", str(path), "--state-dir", str(tmp_path / "state")])
    _, err = capsys.readouterr()
    assert code == 0, err
    trials = ended(tmp_path / "state")
    assert len(trials) == len(points_of(trials)) == CELLS


def test_an_exhausted_grid_completes_the_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    code = main(["run", "-f", str(grid_experiment(tmp_path, 10)), "--state-dir", str(state)])
    out, err = capsys.readouterr()
    assert code == 0, err
    trials = ended(state)
    assert len(trials) == len(points_of(trials)) == CELLS  # every cell once, none again
    assert "Succeeded=True" in out
    assert err.splitlines()[0] == (  # said when it starts: Katib's service refuses such a run
        f"katib-resume: Experiment {NAME} searches a grid of {CELLS} cells, fewer than its"
        " maxTrialCount 10: it succeeds once every cell has run"
    )
    ns, name = NAME.split("/")
    code = main(["run", name, "-n", ns, "--state-dir", str(state)])  # finished for good
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Succeeded=True" in out
    assert "cells" not in err


def test_an_exhausted_random_search_completes_the_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Katib's hyperopt random draws again whatever it issued: on 4 points, 10 Trials of them.
    Ours runs the 4 and succeeds, and says so when it starts."""
    state = tmp_path / "state"
    path = grid_experiment(tmp_path, 10, "random")
    code = main(["run", "-f", str(path), "--state-dir", str(state)])
    out, err = capsys.readouterr()
    assert code == 0, err
    trials = ended(state)
    assert len(trials) == len(points_of(trials)) == CELLS
    assert "Succeeded=True" in out
    assert err.splitlines()[0] == (
        f"katib-resume: Experiment {NAME} searches a space of {CELLS} points, fewer than its"
        " maxTrialCount 10: it succeeds once every point has run"
    )


def test_a_space_as_large_as_its_budget_says_nothing_of_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    code = main(["run", "-f", str(grid_experiment(tmp_path, CELLS)), "--state-dir", str(state)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "cells" not in err
    code = main(
        [
            "run",
            "-f",
            str(grid_experiment(tmp_path, CELLS, "random")),
            "--state-dir",
            str(tmp_path / "random"),
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "points" not in err
