"""A PBT Experiment, Katib's ``simple-pbt`` example, run end to end on the embedded runtime.

It runs to its budget; its Trials carry Katib's generation and parent labels, a later
generation descends from Trials of the one before, each Trial has its checkpoint directory on
the suggestion volume, and raising the budget resumes the same population from the volume.
"""

from __future__ import annotations

import json
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


def test_a_pbt_experiment_runs_its_generations_and_resumes_from_the_volume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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

    edit = ["edit", "experiment", NAME, "-n", NS, "--max-trial-count", "21"]
    assert main([*edit, "--state-dir", str(state)]) == 0
    assert main(["run", NAME, "-n", NS, "--state-dir", str(state)]) == 0
    capsys.readouterr()
    resumed = trials(state)
    assert len(resumed) == len({t["metadata"]["name"] for t in resumed}) == 21
    later = [int(t["metadata"]["labels"][GENERATION]) for t in resumed[15:]]
    assert min(later) >= max(generations)  # the same population goes on, not a new one
    assert main(["get", "events", NAME, "-n", NS, "-o", "json", "--state-dir", str(state)]) == 0
    events = json.loads(capsys.readouterr().out)["items"]
    restored = [e["message"] for e in events if e["reason"] == "SuggestionStateRestored"]
    assert len(restored) == 1 and restored[0].endswith("(15 assignments)")
