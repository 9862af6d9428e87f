"""``run -f`` refuses, before writing anything, an Experiment its suggestion service rejects,
and one admission denies in a directory that holds no state yet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
LOG_RATE: dict[str, Any] = {
    "name": "lr",
    "parameterType": "double",
    "feasibleSpace": {"min": "0.001", "max": "0.1", "step": "0.001", "distribution": "logUniform"},
}
MOMENTUM: dict[str, Any] = {
    "name": "momentum",
    "parameterType": "double",
    "feasibleSpace": {"min": "0.5", "max": "0.9", "step": "0.1"},
}


def with_algorithm(tmp_path: Path, **spec: Any) -> Path:
    experiment = yaml.safe_load(EXAMPLE.read_text())
    experiment["spec"].update(spec)
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return path


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {
                "algorithm": {
                    "algorithmName": "tpe",
                    "algorithmSettings": [{"name": "gamma", "value": "2"}],
                }
            },
            "Validation failed: ValidateAlgorithmSettings Error: gamma should be in the range of"
            " (0, 1)",
        ),
        (
            {"algorithm": {"algorithmName": "grid"}, "parameters": [LOG_RATE, MOMENTUM]},
            "Validation failed: ValidateAlgorithmSettings Error: parameter 'lr': distribution"
            " 'logUniform' is not supported by grid, whose values step uniformly from min to max"
            " (random samples logUniform)",
        ),
        (
            {
                "algorithm": {"algorithmName": "random"},
                "parameters": [
                    {**LOG_RATE, "feasibleSpace": {**LOG_RATE["feasibleSpace"], "min": "0"}},
                    MOMENTUM,
                ],
            },
            "Validation failed: ValidateAlgorithmSettings Error: parameter 'lr': a logUniform"
            " distribution needs min > 0, got 0",
        ),
        (
            {"algorithm": {"algorithmName": "enas"}},
            "Validation failed: ValidateAlgorithmSettings Error: unknown algorithm 'enas'",
        ),
        (
            {
                "earlyStopping": {
                    "algorithmName": "medianstop",
                    "algorithmSettings": [{"name": "min_trials_required", "value": "0"}],
                }
            },
            "Validation failed: ValidateEarlyStoppingSettings Error: min_trials_required must be"
            " greater than zero (>0)",
        ),
    ],
)
def test_run_refuses_settings_the_service_rejects(
    tmp_path: Path, spec: dict[str, Any], message: str
) -> None:
    state = tmp_path / "state"
    command = [sys.executable, "-m", "katib_resume", "run", "-f", with_algorithm(tmp_path, **spec)]
    done = subprocess.run(
        [*map(str, command), "--state-dir", str(state)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert done.stderr.strip().startswith(message), done.stderr
    assert not state.exists()


DUPLICATED = [
    {"name": "learningRate", "reference": "lr"},
    {"name": "momentum", "reference": "momentum"},
    {"name": "again", "reference": "lr"},
]


def _run(state: Path, path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "katib_resume", "run", "-f", str(path)]
    return subprocess.run(
        [*command, "--state-dir", str(state)], capture_output=True, text=True, check=False
    )


def test_run_refused_by_admission_makes_no_state_directory(tmp_path: Path) -> None:
    experiment = yaml.safe_load(EXAMPLE.read_text())
    experiment["metadata"]["name"] = "duplicated"
    experiment["spec"]["trialTemplate"]["trialParameters"] = DUPLICATED
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    state = tmp_path / "state"
    done = _run(state, path)
    assert done.returncode == 1
    assert "parameter reference lr can't be duplicated" in done.stderr, done.stderr
    assert not state.exists()
    assert _run(state, EXAMPLE).returncode == 0  # the same directory, then, for one admitted
    again = _run(state, path)  # a directory with a state: admitted against it, still refused
    assert again.returncode == 1 and "can't be duplicated" in again.stderr, again.stderr
