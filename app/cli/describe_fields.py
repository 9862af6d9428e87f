"""What ``describe`` shows about each kind, beyond the name, labels and owner every kind has.

Experiments and Suggestions get the fields the resume story needs (the policy, the budget, the
best Trial; the Deployment, Service, PVC and PV of the suggestion service, with their UIDs, so
that a reused volume is seen to be the same object). Every other kind shows the columns of its
``get -o wide`` table, one field each: what a user already reads in the table, without its
abbreviations having to fit a line.
"""

from __future__ import annotations

from datetime import datetime

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.cli.kinds import (
    DEPLOYMENT,
    EXPERIMENT,
    PVC,
    SERVICE,
    SUGGESTION,
    TRIAL,
    Resource,
)
from katib_resume.app.cli.tables import columns
from katib_resume.core.katib import ANNOTATION_SEED
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.names import service_name
from katib_resume.core.objective import best_trial
from katib_resume.core.ports import NotFound

Fields = list[tuple[str, str]]
LEFT_OUT = ("NAME", "AGE")
TITLES = {"CLUSTER-IP": "Cluster IP", "PORT(S)": "Ports", "OBJECT": "Involved object"}


def kind_fields(cluster: FakeCluster, resource: Resource, obj: Manifest, now: datetime) -> Fields:
    if resource is EXPERIMENT:
        return experiment_fields(cluster, obj)
    if resource is SUGGESTION:
        return suggestion_fields(cluster, obj)
    return [
        (TITLES.get(header, header.capitalize()), cell(obj))
        for header, cell in columns(resource, now, wide=True)
        if header not in LEFT_OUT
    ]


def experiment_fields(cluster: FakeCluster, obj: Manifest) -> Fields:
    experiment = Experiment.model_validate(obj)
    spec, status = experiment.spec, experiment.status
    objective = spec.objective
    best = best_trial(objective, _optimal_trial(cluster, experiment))
    metric = objective.objective_metric_name if objective else None
    return [
        ("Resume policy", spec.resume_policy or "Never"),
        ("Algorithm", spec.algorithm.algorithm_name),
        ("Objective", _objective(objective.type, metric, objective.goal) if objective else ""),
        ("Budget", _budget(experiment)),
        (
            "Trials",
            f"{status.trials} ({status.trials_succeeded} succeeded, {status.trials_failed} "
            f"failed, {status.trials_running} running, {status.trials_pending} pending)",
        ),
        ("Best trial", f"{best.trial} ({metric}={best.value:g})" if best else "<none>"),
        ("Seed", experiment.metadata.annotations.get(ANNOTATION_SEED, "<none>")),
    ]


def _objective(kind: object, metric: str | None, goal: float | None) -> str:
    """``minimize loss (goal 0.001)``; without a goal (Katib's is optional), ``(no goal)``."""
    return f"{kind} {metric} ({'no goal' if goal is None else f'goal {goal}'})"


def _optimal_trial(cluster: FakeCluster, experiment: Experiment) -> list[Trial]:
    """The Trial the controller last recorded as the best (``currentOptimalTrial``), parsed
    alone: ``describe`` of an Experiment of 5,000 Trials took seconds parsing every one of them
    to find the same Trial. None while no Trial has a value, or once that Trial is gone."""
    optimal = (experiment.status.model_extra or {}).get("currentOptimalTrial")
    name = optimal.get("bestTrialName") if isinstance(optimal, dict) else None
    if not name or not isinstance(name, str):
        return []
    try:
        return [Trial.model_validate(cluster.get(TRIAL.ref(experiment.namespace, name)))]
    except NotFound:
        return []


def _budget(experiment: Experiment) -> str:
    spec = experiment.spec
    return (
        f"maxTrialCount {spec.max_trial_count}, parallelTrialCount {spec.parallel_trial_count}, "
        f"maxFailedTrialCount {spec.max_failed_trial_count}"
    )


def suggestion_fields(cluster: FakeCluster, obj: Manifest) -> Fields:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    algorithm = str((spec.get("algorithm") or {}).get("algorithmName", ""))
    child = service_name(meta["name"], algorithm)
    fields = [
        ("Resume policy", str(spec.get("resumePolicy") or "Never")),
        ("Algorithm", algorithm),
        ("Requested", str(spec.get("requests", 0))),
        ("Assigned", str(status.get("suggestionCount", 0))),
    ]
    pvc: Manifest | None = None
    for resource in (DEPLOYMENT, SERVICE, PVC):
        try:
            found = cluster.get(resource.ref(meta.get("namespace", "default"), child))
        except NotFound:
            fields.append((resource.kind, f"{child}: none"))
            continue
        pvc = found if resource is PVC else pvc
        fields.append((resource.kind, f"{child} (UID {found['metadata'].get('uid')})"))
    if pvc is not None:
        volume = (pvc.get("spec") or {}).get("volumeName") or "<not bound yet>"
        fields.append(("PersistentVolume", str(volume)))
    return fields
