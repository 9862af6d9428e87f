"""A Trial's run object: the kinds that are watched, and the object made from ``spec.runSpec``.

Katib creates any kind found in ``runSpec`` but watches only katib-config's ``trialResources``
(``Kind.version.group``, docs/katib-contract.md#trial-constants,
docs/katib-contract.md#trial-controller), so a Trial of another kind is Running forever. ``refusal``
names such a run before anything is created. The object is made as Katib makes it (the runSpec as
written, plus a controller owner reference to the Trial), with two additions of ours: it is always
named after the Trial in the Trial's namespace (Katib's pod webhook finds the Trial by the run
object's name, so any other name silently loses the metrics), and it carries the
``katib.kubeflow.org/trial`` label (and the Experiment's, when the Trial has it) so that it can be
selected like Katib's pods.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.katib_trial import DEFAULT_TRIAL_RESOURCES, LABEL_TRIAL
from katib_resume.core.manifest import Manifest
from katib_resume.core.model.trial import Trial

Kind = tuple[str, str]
"""``(apiVersion, kind)``."""


def parse_resource(entry: str) -> Kind:
    """``TFJob.v1.kubeflow.org`` as ``("kubeflow.org/v1", "TFJob")``: split at the first two dots.

    Raises ``ValueError`` (Katib exits with "Failed to parse trialResources") for fewer than two.
    """
    parts = entry.split(".", 2)
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"trialResources entry {entry!r} is not Kind.version.group")
    kind, version, group = parts
    return (f"{group}/{version}", kind)


def watched_kinds(trial_resources: Iterable[str] = DEFAULT_TRIAL_RESOURCES) -> frozenset[Kind]:
    return frozenset(parse_resource(entry) for entry in trial_resources)


def describe_kind(kind: Kind) -> str:
    """``("batch/v1", "Job")`` as katib-config spells it: ``Job.v1.batch``."""
    api_version, name = kind
    group, _, version = api_version.rpartition("/")
    return f"{name}.{version}.{group}"


def run_kind(trial: Trial) -> Kind | None:
    spec = trial.spec.run_spec
    if not spec or not spec.get("apiVersion") or not spec.get("kind"):
        return None
    return (str(spec["apiVersion"]), str(spec["kind"]))


def refusal(trial: Trial, watched: frozenset[Kind]) -> str | None:
    """Why the Trial's run object cannot be run, or None when it can."""
    kind = run_kind(trial)
    if kind is None:
        return "Trial has failed: spec.runSpec has no apiVersion and kind, so nothing can run it"
    if kind not in watched:
        listed = ", ".join(sorted(describe_kind(k) for k in watched))
        return (
            f"Trial has failed: its run object kind {describe_kind(kind)} is not among "
            f"katib-config's trialResources ({listed}), so its progress could never be observed"
        )
    owner = _foreign_controller(trial)
    if owner is not None:
        return f"Trial has failed: spec.runSpec is already controlled by {owner}"
    return None


def _foreign_controller(trial: Trial) -> str | None:
    metadata = (trial.spec.run_spec or {}).get("metadata") or {}
    for ref in metadata.get("ownerReferences") or ():
        if ref.get("controller") and ref.get("uid") != trial.metadata.uid:
            return f"{ref.get('kind')} {ref.get('name')}"
    return None


def owner_reference(trial: Trial) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Trial",
        "name": trial.metadata.name,
        "uid": trial.metadata.uid or "",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def desired_run(trial: Trial) -> Manifest:
    """The run object to create: the runSpec, named after the Trial, owned by it, labelled."""
    run: Manifest = copy.deepcopy(trial.spec.run_spec or {})
    metadata = run.setdefault("metadata", {})
    metadata["name"] = trial.metadata.name
    metadata["namespace"] = trial.namespace
    labels = metadata.setdefault("labels", {})
    labels[LABEL_TRIAL] = trial.metadata.name
    experiment = trial.metadata.labels.get(LABEL_EXPERIMENT)
    if experiment:
        labels[LABEL_EXPERIMENT] = experiment
    refs = [r for r in metadata.get("ownerReferences") or () if not r.get("controller")]
    metadata["ownerReferences"] = [*refs, owner_reference(trial)]
    return run


def controller_uid(run: Manifest) -> str | None:
    for ref in (run.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return str(ref.get("uid") or "")
    return None
