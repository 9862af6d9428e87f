"""``pbt`` over gRPC: ``suggestion-server`` as Katib's PBT service, on its volume.

Our gRPC client (the controller's) asks the server on localhost: Katib's validation messages,
Katib's labels on every assignment, each Trial's checkpoint directory under
``<data-dir>/<experiment>/<trial>`` (what Katib's pod webhook mounts at
``suggestion_trial_dir``), a child's directory a copy of its parent's, and the same answers
after a lost reply or a restart on the same volume.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake.cluster import FakeCluster
from katib_resume.adapters.grpc import Endpoints, GrpcSuggestionService
from katib_resume.adapters.local.suggestion.pbt_record import GENERATION, PARENT
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Suggestion
from katib_resume.core.observed import Outcome
from tests.support.served import Served as Serving

NS, NAME = "kubeflow", "simple-pbt"
OBJECTIVE = {"type": "maximize", "objectiveMetricName": "Validation-accuracy"}
LR = {
    "name": "lr",
    "parameterType": "double",
    "feasibleSpace": {"min": "0.0001", "max": "0.02", "step": "0.0001"},
}


def experiment(population: str = "5") -> dict[str, Any]:
    settings = [
        {"name": "suggestion_trial_dir", "value": "/var/log/katib/checkpoints/"},
        {"name": "n_population", "value": population},
        {"name": "truncation_threshold", "value": "0.2"},
    ]
    return {
        "apiVersion": API_VERSION,
        "kind": "Experiment",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "objective": OBJECTIVE,
            "algorithm": {"algorithmName": "pbt", "algorithmSettings": settings},
            "parallelTrialCount": 5,
            "maxTrialCount": 20,
            "resumePolicy": "FromVolume",
            "parameters": [LR],
        },
    }


def suggestion(have: list[Manifest]) -> Suggestion:
    spec = {"algorithm": {"algorithmName": "pbt"}, "requests": len(have)}
    return Suggestion.model_validate(
        {"metadata": {"name": NAME, "namespace": NS}, "spec": spec, "status": {"suggestions": have}}
    )


def finish(cluster: FakeCluster, item: Manifest, accuracy: float) -> None:
    """The Trial of ``item`` ran and succeeded (the controller sends it as completed)."""
    meta = {"name": item["name"], "namespace": NS, "labels": {LABEL_EXPERIMENT: NAME}}
    spec = {"objective": OBJECTIVE, "parameterAssignments": item["parameterAssignments"]}
    created = cluster.create(
        {"apiVersion": API_VERSION, "kind": "Trial", "metadata": meta, "spec": spec}
    )
    conditions = [{"type": t, "status": "True"} for t in ("Created", "Running", "Succeeded")]
    metric = {"name": "Validation-accuracy", "min": "0", "max": str(accuracy), "latest": "0"}
    status = {
        "conditions": conditions,
        "startTime": "2026-12-01T10:00:00Z",
        "completionTime": "2026-12-01T10:05:00Z",
        "observation": {"metrics": [metric]},
    }
    ref = ObjectRef(API_VERSION, "Trial", NS, item["name"])
    cluster.update_status(ref, status, created["metadata"].get("resourceVersion"))


class Served(Serving):
    def ask(self, have: list[Manifest], count: int) -> list[Manifest]:
        return list(self.client.get_suggestions(suggestion(have), count).items)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    serving = Served(tmp_path / "opt-katib-data", experiment())
    yield serving
    serving.stop()


def test_pbt_settings_are_validated_with_katibs_message(served: Served) -> None:
    assert served.client.validate(suggestion([])).outcome is Outcome.VALID
    other = FakeCluster()
    other.create(experiment(population="4"))
    client = GrpcSuggestionService(other, Endpoints(served.endpoint, served.endpoint))
    verdict = client.validate(suggestion([]))
    client.close()
    assert (verdict.outcome, verdict.message) == (
        Outcome.INVALID,
        "ValidateAlgorithmSettings Error: Param(n_population) should be >= 5",
    )


def test_generations_carry_katibs_labels_and_checkpoints(served: Served) -> None:
    first = served.ask([], 5)
    assert [item["labels"] for item in first] == [{GENERATION: "0"}] * 5
    home = served.data_dir / NAME
    for rank, item in enumerate(first):
        assert list((home / item["name"]).iterdir()) == []  # an empty directory to save in
        (home / item["name"] / "training.ckpt").write_text(item["name"])
        finish(served.cluster, item, accuracy=0.5 + rank / 10)
    second = served.ask(first, 3)
    names = {item["name"] for item in first}
    for item in second:
        assert item["labels"][GENERATION] == "1" and item["labels"][PARENT] in names
        checkpoint = home / item["name"] / "training.ckpt"
        assert checkpoint.read_text() == item["labels"][PARENT]  # the parent's, copied
    assert served.ask(first, 3) == second  # a lost reply: the same assignments and labels
    served.stop()
    served.start()  # a new pod on the same volume
    assert served.ask(first, 3) == second
    assert served.ask([*first, *second], 2) == served.ask([*first, *second], 2)


def test_a_lost_state_is_rebuilt_over_grpc_with_its_lineage(served: Served) -> None:
    """Katib's controller sends a Trial's ``spec.labels``, not the labels its assignment had:
    a service whose state file is lost finds the lineage again from the Trials' names (our
    names give the issue order, though every Trial started in the same second) and values."""
    held: list[Manifest] = []
    for batch in (5, 5, 4):
        items = served.ask(held, batch)
        for rank, item in enumerate(items):
            finish(served.cluster, item, accuracy=0.3 + ((rank * 7 + len(held)) % 10) / 20)
        held += items
    assert {item["labels"][GENERATION] for item in held} == {"0", "1", "2"}
    kept = served.ask(held, 3)
    served.stop()
    (served.data_dir / NAME / "suggestion-state.json").unlink()
    served.start()
    assert served.ask(held, 3) == kept
