"""The embedded host hands the suggestion service the finished Trials' results, read once each."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.cluster import FakeCluster
from katib_resume.adapters.local.suggestion.results import trial_results
from katib_resume.app.embedded.results import ResultBook
from katib_resume.app.embedded.services import ServiceHost
from katib_resume.app.loop.informer import Informer
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.ports import NotFound

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


PHASES = st.sampled_from(["Running", "Succeeded", "Failed", "EarlyStopped", "Killed"])
CHANGES = st.lists(
    st.tuples(
        st.sampled_from("abcde"),
        st.one_of(st.none(), st.tuples(PHASES, st.sampled_from([None, "0.5", "0.25"]))),
    ),
    max_size=25,
)


@given(CHANGES)
def test_a_result_book_on_the_watch_cache_answers_as_a_full_read(
    changes: list[tuple[str, tuple[str, str | None] | None]],
) -> None:
    """Fed only what changed, the book always answers what reading every Trial answers."""
    experiment = Experiment.model_validate(
        {
            "metadata": {"name": NAME, "namespace": NS, "uid": "u1"},
            "spec": {
                "objective": {"type": "minimize", "objectiveMetricName": "loss"},
                "algorithm": {"algorithmName": "random"},
                "parameters": [],
            },
        }
    )
    cluster = FakeCluster()
    informer = Informer(cluster.for_cache())
    book = ResultBook()
    for name, change in changes:
        ref = ObjectRef(API_VERSION, "Trial", NS, name)
        if change is None:
            with contextlib.suppress(NotFound):
                cluster.delete(ref, cluster.get(ref)["metadata"]["uid"])
        else:
            manifest = trial(name, *change)
            try:
                stored = cluster.get(ref)
            except NotFound:
                stored = cluster.create(manifest)
            cluster.update_status(ref, manifest["status"], stored["metadata"]["resourceVersion"])
        informer.sync()
        listed = cluster.list(API_VERSION, "Trial", NS, {LABEL_EXPERIMENT: NAME})
        expected = trial_results(experiment, [Trial.model_validate(t) for t in listed])
        assert book.results(informer, experiment) == expected
