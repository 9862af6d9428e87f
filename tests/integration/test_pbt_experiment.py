"""A PBT Experiment, Katib's ``simple-pbt`` example, run end to end on the embedded runtime.

It runs to its budget; its Trials carry Katib's generation and parent labels, a later
generation descends from Trials of the one before, each Trial has its checkpoint directory on
the suggestion volume. Raising the budget resumes the population from the volume (or, its state
file lost, from the labels of the history, with a Warning event). The first budget (15) is a
multiple of the parallelism (3), so the resumed run asks in the same batches, knowing the same
results, as a run that never stopped: its Trials are exactly that run's. (With a budget that
cuts a batch short, the two ask at different moments and PBT, which breeds from the results it
knows, may then differ: the suggestion property tests hold the plan of asks fixed.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.adapters.fake.persistence import read
from katib_resume.adapters.local.suggestion.pbt_record import GENERATION, PARENT
from katib_resume.app.cli.main import main

NS, NAME = "kubeflow", "simple-pbt"
SETTINGS = {
    "suggestion_trial_dir": "/var/log/katib/checkpoints/",
    "n_population": "5",
    "truncation_threshold": "0.2",
}


def simple_pbt(tmp_path: Path, max_trials: int) -> Path:
    """Katib's ``examples/v1beta1/hp-tuning/simple-pbt.yaml``, with a population of 5 and a
    budget that reaches past the first generations (Katib's runs two Trials of 40)."""
    container = {
        "name": "training-container",
        "image": "docker.io/kubeflowkatib/simple-pbt:v0.15.0",
        "command": [
            "python3",
            "/opt/pbt/pbt_test.py",
            "--epochs=20",
            "--lr=${trialParameters.learningRate}",
            "--checkpoint=/var/log/katib/checkpoints/",
        ],
    }
    lr = {"min": "0.0001", "max": "0.02", "step": "0.0001"}
    experiment = {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Experiment",
        "metadata": {"namespace": NS, "name": NAME},
        "spec": {
            "maxTrialCount": max_trials,
            "parallelTrialCount": 3,
            "maxFailedTrialCount": 3,
            "resumePolicy": "FromVolume",
            "objective": {
                "type": "maximize",
                "goal": 0.99,
                "objectiveMetricName": "Validation-accuracy",
            },
            "algorithm": {
                "algorithmName": "pbt",
                "algorithmSettings": [{"name": k, "value": v} for k, v in SETTINGS.items()],
            },
            "parameters": [{"name": "lr", "parameterType": "double", "feasibleSpace": lr}],
            "trialTemplate": {
                "primaryContainerName": "training-container",
                "trialParameters": [{"name": "learningRate", "reference": "lr"}],
                "trialSpec": {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "spec": {
                        "template": {"spec": {"containers": [container], "restartPolicy": "Never"}}
                    },
                },
            },
        },
    }
    path = tmp_path / "simple-pbt.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return path


def trials(state: Path) -> list[dict[str, Any]]:
    listed = read(state).list("kubeflow.org/v1beta1", "Trial", NS, {})
    return sorted(listed, key=lambda t: t["metadata"]["creationTimestamp"])


def assignments(state: Path) -> list[tuple[str, dict[str, str], list[Any]]]:
    return [
        (t["metadata"]["name"], t["metadata"]["labels"], t["spec"]["parameterAssignments"])
        for t in trials(state)
    ]


def test_a_pbt_experiment_runs_its_generations(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert main(["run", "-f", str(simple_pbt(tmp_path, 15)), "--state-dir", str(state)]) == 0
    first = trials(state)
    assert len(first) == 15
    by_name = {t["metadata"]["name"]: t for t in first}
    generations = [int(t["metadata"]["labels"][GENERATION]) for t in first]
    assert generations[:5] == [0] * 5 and max(generations) >= 2
    for trial in first:
        labels = trial["metadata"]["labels"]
        if PARENT in labels:
            parent = by_name[labels[PARENT]]["metadata"]["labels"]
            assert int(parent[GENERATION]) == int(labels[GENERATION]) - 1
    directories = {p.name for p in (state / "volumes").rglob(f"{NAME}-*") if p.is_dir()}
    assert set(by_name) <= directories  # one checkpoint directory per Trial, on the volume


@pytest.mark.parametrize(
    ("lose_state", "event"), [(False, "SuggestionStateRestored"), (True, "SuggestionStateRebuilt")]
)
def test_a_resumed_pbt_experiment_equals_an_uninterrupted_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lose_state: bool, event: str
) -> None:
    """Resumed from its state file, or rebuilt from the history's labels when it is lost (with a
    Warning event), the population goes on as if the Experiment had never stopped (see the
    module docstring)."""
    straight = tmp_path / "straight"
    assert main(["run", "-f", str(simple_pbt(tmp_path, 21)), "--state-dir", str(straight)]) == 0
    state = tmp_path / "state"
    assert main(["run", "-f", str(simple_pbt(tmp_path, 15)), "--state-dir", str(state)]) == 0
    if lose_state:
        for saved in (state / "volumes").rglob("suggestion-state.json"):
            saved.unlink()
    edit = ["edit", "experiment", NAME, "-n", NS, "--max-trial-count", "21"]
    assert main([*edit, "--state-dir", str(state)]) == 0
    assert main(["run", NAME, "-n", NS, "--state-dir", str(state)]) == 0
    assert assignments(state) == assignments(straight)
    capsys.readouterr()
    assert main(["get", "events", NAME, "-n", NS, "-o", "json", "--state-dir", str(state)]) == 0
    events = json.loads(capsys.readouterr().out)["items"]
    said = [(e["type"], e["message"]) for e in events if e["reason"] == event]
    assert len(said) == 1 and said[0][0] == ("Warning" if lose_state else "Normal")
    assert "15 assignment" in said[0][1]


def test_run_refuses_katibs_invalid_pbt_settings_before_writing_anything(tmp_path: Path) -> None:
    path = simple_pbt(tmp_path, 15)
    experiment = yaml.safe_load(path.read_text())
    experiment["spec"]["algorithm"]["algorithmSettings"][1]["value"] = "3"  # n_population
    path.write_text(yaml.safe_dump(experiment))
    state = tmp_path / "state"
    command = [sys.executable, "-m", "katib_resume", "run", "-f", str(path)]
    done = subprocess.run(
        [*command, "--state-dir", str(state)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "Validation failed: ValidateAlgorithmSettings Error: Param(n_population) should be >= 5"
    ), done.stderr
    assert not state.exists()
