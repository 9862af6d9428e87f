"""A ``random`` Experiment with a ``logUniform`` learning rate, run and resumed on the embedded
runtime, as a user runs it (``run -f``, ``edit --max-trial-count``, ``run``).

Katib's ``random`` samples every distribution; ours did not admit this Experiment at all.
Its Trials receive values inside their ``feasibleSpace``, spread over its decades as a
log-uniform law spreads them, and a run resumed from the volume gets exactly the values of a
run that was never interrupted.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.adapters.fake.persistence import read
from katib_resume.app.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
NS, NAME = "kubeflow", "from-volume-resume"
LOW, HIGH = 0.0001, 0.1


def experiment_file(tmp_path: Path, max_trials: int) -> Path:
    experiment: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    spec = experiment["spec"]
    spec["algorithm"] = {
        "algorithmName": "random",
        "algorithmSettings": [{"name": "random_state", "value": "7"}],
    }
    spec["maxTrialCount"], spec["parallelTrialCount"] = max_trials, 3
    spec["parameters"] = [
        {
            "name": "lr",
            "parameterType": "double",
            "feasibleSpace": {"min": str(LOW), "max": str(HIGH), "distribution": "logUniform"},
        },
        {
            "name": "momentum",
            "parameterType": "double",
            "feasibleSpace": {"min": "0.5", "max": "0.9", "step": "0.1", "distribution": "normal"},
        },
    ]
    path = tmp_path / f"random-{max_trials}.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return path


def assignments(state: Path) -> list[dict[str, str]]:
    """Each Trial's values, in the order the Suggestion issued them."""
    suggestion = read(state).list("kubeflow.org/v1beta1", "Suggestion", NS, {})[0]
    return [
        {p["name"]: p["value"] for p in item["parameterAssignments"]}
        for item in suggestion["status"]["suggestions"]
    ]


def ok(*args: str | Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*map(str, args)])
    _, err = capsys.readouterr()
    assert code == 0, err


def test_a_log_uniform_rate_is_searched_and_resumed_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    resumed, straight = tmp_path / "resumed", tmp_path / "straight"
    ok("run", "-f", experiment_file(tmp_path, 12), "--state-dir", resumed, capsys=capsys)
    assert len(assignments(resumed)) == 12
    ok("edit", "experiment", NAME, "-n", NS, "--max-trial-count", "30", "--state-dir", resumed,
       capsys=capsys)  # fmt: skip
    ok("run", NAME, "-n", NS, "--state-dir", resumed, capsys=capsys)
    ok("run", "-f", experiment_file(tmp_path, 30), "--state-dir", straight, capsys=capsys)

    values = assignments(resumed)
    assert values == assignments(straight)
    rates = [float(v["lr"]) for v in values]
    assert len(rates) == 30 and all(LOW <= r <= HIGH for r in rates)
    assert {v["momentum"] for v in values} <= {"0.5", "0.6", "0.7", "0.8", "0.9"}
    # log-uniform: a third of the draws in each decade, where a uniform law puts 0.9 % below
    # 0.001 and has its median at 0.05 (this law's: 0.0032)
    assert {math.floor(math.log10(r)) for r in rates if r < HIGH} == {-4, -3, -2}
    assert sum(r < 0.001 for r in rates) >= 5
    assert statistics.median(rates) < 0.01
