"""The embedded host hands the suggestion service the finished Trials' results, read once each."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from katib_resume.adapters.fake.cluster import FakeCluster
from katib_resume.app.embedded.services import ServiceHost
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.kube import Manifest
from katib_resume.core.model import Experiment, Trial

NS, NAME = "kubeflow", "exp"


def trial(name: str, phase: str, loss: str | None) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": [{"type": phase, "status": "True"}]}
    if loss is not None:
        status["observation"] = {"metrics": [{"name": "loss", "min": loss, "latest": loss}]}
    return {
        "apiVersion": API_VERSION,
        "kind": "Trial",
        "metadata": {"name": name, "namespace": NS, "labels": {LABEL_EXPERIMENT: NAME}},
        "spec": {},
        "status": status,
    }


class Listed(FakeCluster):
    """A cluster whose listings hand out the same objects until they change, as the
    embedded runtime's watch-fed cache does."""

    def __init__(self, trials: list[dict[str, Any]]) -> None:
        super().__init__()
        self.trials = trials

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        return self.trials


def test_results_are_the_finished_trials_values(monkeypatch: pytest.MonkeyPatch) -> None:
    trials = [
        trial("a", "Succeeded", "0.5"),
        trial("b", "Failed", None),
        trial("c", "Running", "0.9"),
        trial("d", "EarlyStopped", "0.7"),
        trial("e", "Succeeded", None),
    ]
    spec = {
        "objective": {"type": "minimize", "objectiveMetricName": "loss"},
        "algorithm": {"algorithmName": "tpe"},
        "parameters": [],
    }
    experiment = Experiment.model_validate(
        {"metadata": {"name": NAME, "namespace": NS}, "spec": spec}
    )
    host = ServiceHost(Listed(trials), lambda namespace, name: None, 0)
    assert host._results(experiment) == {"a": 0.5, "b": None, "d": 0.7}
    parsed: list[object] = []
    real = Trial.model_validate

    def counted(raw: object) -> Trial:
        parsed.append(raw)
        return real(raw)

    monkeypatch.setattr(Trial, "model_validate", counted)
    trials[2] = trial("c", "Succeeded", "0.9")  # one Trial changed: a new object
    assert host._results(experiment) == {"a": 0.5, "b": None, "c": 0.9, "d": 0.7}
    assert parsed == [trials[2]]  # only the changed one was read again
