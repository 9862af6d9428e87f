"""The Suggestion an Experiment owns, as the Experiment's planner creates it
(docs/katib-contract.md#suggestion).

Same name and namespace as the Experiment, its labels and annotations, a controller owner
reference to it, and a snapshot of algorithm, early stopping and resume policy. A FromVolume
Suggestion is born with our finalizer, so that the cluster-scoped PV (which no owner reference
can collect) is cleaned up even if the controller is down when the Experiment is deleted.
"""

from __future__ import annotations

from katib_resume.core import trial_meta
from katib_resume.core.katib import API_VERSION, FINALIZER_PV_CLEANUP, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment
from katib_resume.core.policy import traits


def experiment_owner(experiment: Experiment) -> Manifest:
    """The controller owner reference to ``experiment`` (no ``uid`` in a preview)."""
    ref: Manifest = {
        "apiVersion": API_VERSION,
        "kind": "Experiment",
        "name": experiment.metadata.name,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    if experiment.metadata.uid:
        ref["uid"] = experiment.metadata.uid
    return ref


def desired_suggestion(experiment: Experiment, requests: int) -> Manifest:
    """The Suggestion manifest for ``experiment`` asking for ``requests`` assignments in all."""
    spec = experiment.spec
    metadata: Manifest = {
        "name": experiment.metadata.name,
        "namespace": experiment.namespace,
        "ownerReferences": [experiment_owner(experiment)],
    }
    if experiment.metadata.labels:
        metadata["labels"] = dict(experiment.metadata.labels)
    if experiment.metadata.annotations:
        metadata["annotations"] = dict(experiment.metadata.annotations)
    if traits(spec.policy).has_volume:
        metadata["finalizers"] = [FINALIZER_PV_CLEANUP]
    body: Manifest = {
        "algorithm": spec.algorithm.to_dict(),
        "requests": requests,
        "resumePolicy": spec.policy.value,
    }
    if spec.early_stopping is not None:
        body["earlyStopping"] = spec.early_stopping.to_dict()
    return {"apiVersion": API_VERSION, "kind": "Suggestion", "metadata": metadata, "spec": body}


def desired_trial(experiment: Experiment, assignment: Manifest) -> Manifest:
    """The Trial for one assignment of the suggestion service (Katib's trial from template).

    ``runSpec`` is the trial template's ``trialSpec`` with every ``${trialParameters.X}``
    replaced by the value of the parameter or the Trial's metadata ``X`` references
    (``core/trial_meta.py``); a placeholder whose reference has no value stays as it is, so the
    trial fails visibly instead of running with a wrong value; its ``metadata`` names the Trial
    and its namespace, as Katib's does.
    """
    template: Manifest = _extra(experiment, "trialTemplate")
    substitutions = _substitutions(experiment, template, assignment)
    labels = dict(experiment.metadata.labels)
    labels[LABEL_EXPERIMENT] = experiment.metadata.name
    labels.update(assignment.get("labels") or {})
    spec: Manifest = {"parameterAssignments": list(assignment.get("parameterAssignments", ()))}
    if assignment.get("earlyStoppingRules"):
        spec["earlyStoppingRules"] = list(assignment["earlyStoppingRules"])
    if experiment.spec.objective is not None:
        spec["objective"] = experiment.spec.objective.to_dict()
    spec.update(_run_fields(experiment, template))
    if "trialSpec" in template:
        spec["runSpec"] = _named(
            _render(template["trialSpec"], substitutions), assignment, experiment
        )
    metadata: Manifest = {
        "name": assignment["name"],
        "namespace": experiment.namespace,
        "labels": labels,
        "ownerReferences": [experiment_owner(experiment)],
    }
    return {"apiVersion": API_VERSION, "kind": "Trial", "metadata": metadata, "spec": spec}


def _substitutions(
    experiment: Experiment, template: Manifest, assignment: Manifest
) -> dict[str, str]:
    """Each trial parameter's placeholder and its text: the Trial's metadata for a reference to
    it (read first, as Katib reads it), else the assigned value of the parameter it names."""
    values = {p["name"]: str(p["value"]) for p in assignment.get("parameterAssignments", ())}
    run = template.get("trialSpec")
    run = run if isinstance(run, dict) else {}
    substitutions: dict[str, str] = {}
    for entry in template.get("trialParameters", ()):
        reference = entry.get("reference")
        if not isinstance(reference, str):
            continue
        meta = trial_meta.parse(reference)
        if meta is not None:
            found = trial_meta.value(meta, assignment["name"], experiment.namespace, run)
        else:
            found = values.get(reference)
        if found is not None:
            substitutions[f"${{trialParameters.{entry['name']}}}"] = found
    return substitutions


def _run_fields(experiment: Experiment, template: Manifest) -> Manifest:
    """What the trial controller reads to run the Trial, copied as Katib's getTrialInstance
    copies it (docs/katib-contract.md#trials): ``retainRun`` from ``retain``, the metrics collector,
    the primary pod and container, and the success and failure conditions only when both are
    given."""
    fields: Manifest = {}
    if "retain" in template:
        fields["retainRun"] = bool(template["retain"])
    collector = _extra(experiment, "metricsCollectorSpec")
    if collector:
        fields["metricsCollector"] = collector
    for key in ("primaryPodLabels", "primaryContainerName"):
        if template.get(key):
            fields[key] = template[key]
    if template.get("successCondition") and template.get("failureCondition"):
        fields["successCondition"] = template["successCondition"]
        fields["failureCondition"] = template["failureCondition"]
    return fields


def _named(run: object, assignment: Manifest, experiment: Experiment) -> object:
    """The run spec named after its Trial, in its namespace, as Katib stores it (admission has
    made sure the template names neither)."""
    if not isinstance(run, dict):
        return run
    metadata = run.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, dict) else {}
    metadata.update(name=assignment["name"], namespace=experiment.namespace)
    return {**run, "metadata": metadata}


def _extra(experiment: Experiment, field: str) -> Manifest:
    """A spec field the model keeps as an extra, read in place: it is the parsed JSON itself,
    so serialising the whole Experiment to find it (its largest part) would only copy it.
    Read-only: ``_render`` builds the new Trial's spec from it without changing it."""
    value = (experiment.spec.model_extra or {}).get(field)
    return value if isinstance(value, dict) else {}


def _render(node: object, substitutions: dict[str, str]) -> object:
    if isinstance(node, str):
        for placeholder, value in substitutions.items():
            node = node.replace(placeholder, value)
        return node
    if isinstance(node, dict):
        return {key: _render(value, substitutions) for key, value in node.items()}
    if isinstance(node, list):
        return [_render(value, substitutions) for value in node]
    return node
