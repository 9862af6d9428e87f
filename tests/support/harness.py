"""A test bench: the fake cluster, the reconcile shell and a scripted world around them.

The bench plays the parts Katib's other controllers and the kubelet play (creating and finishing
Trials, making a Deployment available, editing and deleting the Experiment) and records every
status the controller writes, so tests can compare condition sequences with
docs/katib-contract.md#suggestion-sequences.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

from katib_resume.adapters.fake import FakeClock, FakeCluster
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.reconcile import reconcile
from katib_resume.core.actions import ObjectRef, UpdateStatus
from katib_resume.core.config import KatibConfig, parse_katib_config
from katib_resume.core.katib import (
    ANNOTATION_OWNER_UID,
    API_VERSION,
    FINALIZER_PV_CLEANUP,
    LABEL_EXPERIMENT,
)
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Suggestion
from katib_resume.core.observed import VALID, Assignments, Validation
from katib_resume.core.plan import Plan
from katib_resume.core.ports import NotFound

DATA = Path(__file__).resolve().parent.parent / "data"
NOTATION = {
    ("Created", "True", "SuggestionCreated"): "C",
    ("DeploymentReady", "False", "DeploymentNotReady"): "DR-",
    ("DeploymentReady", "True", "DeploymentReady"): "DR+",
    ("Running", "True", "SuggestionRunning"): "R+",
    ("Running", "False", "Suggestion is succeeded"): "R-s",
    ("DeploymentReady", "False", "Suggestion is succeeded"): "DR-s",
    ("Running", "False", "Experiment is restarting"): "R-r",
    ("Created", "True", "ExperimentCreated"): "Cr",
    ("Running", "True", "ExperimentRunning"): "Ru+",
    ("Running", "False", "ExperimentRunning"): "Ru-",
    ("Restarting", "True", "ExperimentRestarting"): "Rs",
    ("Succeeded", "True", "ExperimentMaxTrialsReached"): "SM",
    ("Succeeded", "True", "ExperimentGoalReached"): "SG",
    ("Failed", "True", "ExperimentFailed"): "F",
}


def load(name: str) -> Any:
    """A private copy of a test data file (parsed once: YAML parsing is slow)."""
    return copy.deepcopy(_parsed(name))


@functools.cache
def _parsed(name: str) -> Any:
    return yaml.safe_load((DATA / name).read_text())


def shipped_config_data(**random_entry: Any) -> Manifest:
    """A private copy of Katib's shipped katib-config, its ``random`` entry updated with
    ``random_entry`` (for a test to parse, or to write out as a file or ConfigMap)."""
    data: Manifest = load("katib-config.yaml")
    for entry in data["runtime"]["suggestions"]:
        if entry["algorithmName"] == "random":
            entry.update(random_entry)
    return data


def shipped_config(**random_entry: Any) -> KatibConfig:
    """The shipped katib-config, parsed, with ``random_entry`` as in ``shipped_config_data``."""
    return parse_katib_config(shipped_config_data(**random_entry))


def notation(conditions: list[Manifest]) -> list[str]:
    out = []
    for c in conditions:
        key = (c["type"], c["status"], c.get("reason", ""))
        short = NOTATION.get(key, f"{c['type']}={c['status']}({c.get('reason', '')})")
        if short == "Failed=True(SuggestionFailed)":
            short = "SF"
        if c["type"] == "Succeeded" and c.get("reason") == "Experiment is succeeded":
            short = "S_V" if "can be restarted" in c["message"] else "S_N"
        out.append(short)
    return out


class Bench:
    def __init__(self, experiment: Manifest, config: KatibConfig | None = None) -> None:
        self.clock = FakeClock()
        self.cluster = FakeCluster(self.clock)
        self.config = config or shipped_config()
        self.validation: Validation | None = None
        self.serves_assignments = False  # by default the tests script Trials themselves
        self.algorithm_settings: tuple[Manifest, ...] = ()
        meta = experiment["metadata"]
        self.key = Key(meta.get("namespace", "default"), meta["name"])
        self.history: dict[str, list[list[str]]] = {"Experiment": [], "Suggestion": []}
        self.plans: list[Plan] = []
        self.cluster.create(copy.deepcopy(experiment))

    # -- the controller ---------------------------------------------------------------------
    def reconcile(self) -> Plan:
        self.clock.advance(1)
        decided, _ = reconcile(self.cluster, self.key, self.config, self.clock.now(), self)
        for action in decided.actions:
            if isinstance(action, UpdateStatus):
                self.history[action.ref.kind].append(notation(action.status.get("conditions", [])))
        self.plans.append(decided)
        return decided

    def settle(self, limit: int = 20) -> list[Plan]:
        """Reconcile until a reconcile plans no write (the fixed point); return the plans."""
        plans = []
        for _ in range(limit):
            plans.append(self.reconcile())
            if not plans[-1].writes:
                return plans
        raise AssertionError(f"no fixed point after {limit} reconciles: {plans[-1].writes}")

    def validate(self, suggestion: object) -> Validation:  # the SuggestionService port
        return self.validation or VALID

    def get_suggestions(self, suggestion: Suggestion, count: int) -> Assignments:
        """A scripted service: numbered assignments, ``lr`` from the index, and
        ``algorithm_settings`` (set by a test) returned with them."""
        if not self.serves_assignments:
            return Assignments()
        have = len(suggestion.status.suggestions)
        items = [
            {
                "name": f"{suggestion.name}-a{index:04d}",
                "parameterAssignments": [{"name": "lr", "value": str(0.01 + index / 1000)}],
            }
            for index in range(have, have + count)
        ]
        return Assignments(tuple(items), self.algorithm_settings)

    # -- the world ---------------------------------------------------------------------------
    def ref(self, kind: str, suffix: str = "", api: str = API_VERSION) -> ObjectRef:
        namespace = None if kind == "PersistentVolume" else self.key.namespace
        return ObjectRef(api, kind, namespace, self.key.name + suffix)

    def get(self, kind: str, suffix: str = "", api: str = API_VERSION) -> Manifest | None:
        try:
            return self.cluster.get(self.ref(kind, suffix, api))
        except NotFound:
            return None

    def experiment(self) -> Manifest:
        found = self.get("Experiment")
        assert found is not None
        return found

    def suggestion(self) -> Manifest | None:
        return self.get("Suggestion")

    def deployment(self) -> Manifest | None:
        return self.get("Deployment", "-random", "apps/v1")

    def service(self) -> Manifest | None:
        return self.get("Service", "-random", "v1")

    def pvc(self) -> Manifest | None:
        return self.get("PersistentVolumeClaim", "-random", "v1")

    def pv(self) -> Manifest | None:
        return self.get("PersistentVolume", f"-random-{self.key.namespace}", "v1")

    def conditions(self, kind: str) -> list[str]:
        obj = self.get(kind)
        return notation(obj.get("status", {}).get("conditions", [])) if obj else []

    def set_available(self, available: bool = True) -> None:
        ref = self.ref("Deployment", "-random", "apps/v1")
        status = {"conditions": [{"type": "Available", "status": str(available)}]}
        self.cluster.update_status(ref, status, None)

    def add_trials(
        self,
        count: int,
        phase: str = "Succeeded",
        namespace: str | None = None,
        loss: float | None = None,
    ) -> None:
        existing = self.cluster.list(API_VERSION, "Trial", None, {})
        exp = self.experiment()
        for index in range(len(existing), len(existing) + count):
            trial = {
                "apiVersion": API_VERSION,
                "kind": "Trial",
                "metadata": {
                    "name": f"{self.key.name}-{index:04d}",
                    "namespace": namespace or self.key.namespace,
                    "labels": {LABEL_EXPERIMENT: self.key.name},
                    "ownerReferences": [
                        {
                            "apiVersion": API_VERSION,
                            "kind": "Experiment",
                            "name": self.key.name,
                            "uid": exp["metadata"]["uid"],
                            "controller": True,
                        }
                    ]
                    if namespace is None
                    else [],
                },
            }
            created = self.cluster.create(trial)
            status: Manifest = {"conditions": [{"type": phase, "status": "True"}]}
            if loss is not None:
                metric = {"name": "loss", "min": str(loss), "max": str(loss), "latest": str(loss)}
                status["observation"] = {"metrics": [metric]}
            self.cluster.update_status(ObjectRef.of(created), status, None)

    def finish_trials(self, phase: str = "Succeeded") -> None:
        """Every running Trial finishes in ``phase``."""
        for trial in self.cluster.list(API_VERSION, "Trial", None, {}):
            if trial.get("status", {}).get("conditions", [{}])[0].get("type") == "Running":
                status = {"conditions": [{"type": phase, "status": "True"}]}
                self.cluster.update_status(ObjectRef.of(trial), status, None)

    def bind_pvc(self) -> None:
        ref = self.ref("PersistentVolumeClaim", "-random", "v1")
        self.cluster.update_status(ref, {"phase": "Bound"}, None)

    def edit(self, **spec: Any) -> None:
        exp = self.experiment()
        for field, value in spec.items():
            if value is None:
                exp["spec"].pop(field, None)
            else:
                exp["spec"][field] = value
        self.cluster.update(exp)

    def delete_experiment(self) -> None:
        exp = self.experiment()
        self.cluster.delete(self.ref("Experiment"), exp["metadata"]["uid"])


def owned_volume_is_cleaned_up(bench: Bench) -> Manifest:
    """Check the PV of a settled FromVolume bench: pre-bound to its claim, owned by annotation
    (never an owner reference), held by our finalizer; then delete the Experiment and check that
    PV, PVC and Suggestion all go. The PV as it was, for the caller's own checks."""
    pv, pvc, suggestion = bench.pv(), bench.pvc(), bench.suggestion()
    assert pv is not None and pvc is not None and suggestion is not None
    assert pv["spec"]["claimRef"]["name"] == pvc["metadata"]["name"]
    assert pv["spec"]["claimRef"]["namespace"] == pvc["metadata"]["namespace"]
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"]
    assert "ownerReferences" not in pv["metadata"]
    assert pv["metadata"]["annotations"][ANNOTATION_OWNER_UID] == suggestion["metadata"]["uid"]
    assert FINALIZER_PV_CLEANUP in suggestion["metadata"]["finalizers"]
    bench.delete_experiment()
    bench.settle()
    assert bench.pv() is None and bench.suggestion() is None and bench.pvc() is None
    return pv
