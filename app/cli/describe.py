"""``katib-resume describe experiment|suggestion NAME``: what happened to one object, in order.

A resume is a story told by two sources that Kubernetes keeps apart: the conditions (the state
now, each with the time of its last transition) and the Events (every transition, with its
time). ``describe`` prints the key fields, the conditions, then both merged into one timeline
ordered by time, so that "completed, torn down, restarted, restored from the volume" reads top
to bottom. Read-only, like ``get``.
"""

from __future__ import annotations

import argparse
from datetime import datetime

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.cli.kinds import (
    DEPLOYMENT,
    EXPERIMENT,
    PVC,
    SERVICE,
    SUGGESTION,
    TRIAL,
    find,
    resolve,
)
from katib_resume.app.common.output import age, parse_time, table
from katib_resume.app.embedded.driver import namespace, read_cluster
from katib_resume.core.katib import ANNOTATION_SEED, LABEL_EXPERIMENT
from katib_resume.core.kube import Manifest
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.names import service_name
from katib_resume.core.objective import best_trial
from katib_resume.core.ports import NotFound

EXIT_OK = 0
Row = tuple[str, str, str, str, str]


def describe(args: argparse.Namespace) -> int:
    resource = resolve(args.kind, allowed=(EXPERIMENT, SUGGESTION))
    cluster = read_cluster(args.state_dir)
    obj = find(cluster, resource, namespace(args), args.name)
    now = cluster.clock.now()
    meta = obj["metadata"]
    created = meta.get("creationTimestamp", "")
    fields = [
        ("Name", meta["name"]),
        ("Namespace", meta.get("namespace", "")),
        ("UID", meta.get("uid", "")),
        ("Created", f"{created} ({age(created, now)} ago)"),
    ]
    fields += _experiment(cluster, obj) if resource is EXPERIMENT else _suggestion(cluster, obj)
    width = max(len(key) for key, _ in fields) + 2
    print("".join(f"{key + ':':<{width}}{value}\n" for key, value in fields), end="")
    conditions = (obj.get("status") or {}).get("conditions") or []
    headers = ["TYPE", "STATUS", "REASON", "MESSAGE"]
    _section(
        "Conditions", headers, [[str(c.get(k.lower(), "")) for k in headers] for c in conditions]
    )
    headers = ["TIME", "AGE", "SOURCE", "WHAT", "MESSAGE"]
    _section("Timeline", headers, _timeline(cluster, obj, now))
    return EXIT_OK


def _section(title: str, headers: list[str], cells: list[list[str]]) -> None:
    print(f"{title}:")
    print(table(headers, cells, indent="  ") if cells else "  <none>\n", end="")


def _experiment(cluster: FakeCluster, obj: Manifest) -> list[tuple[str, str]]:
    experiment = Experiment.model_validate(obj)
    spec, status = experiment.spec, experiment.status
    objective = spec.objective
    trials = [
        Trial.model_validate(raw)
        for raw in cluster.list(
            TRIAL.api_version, TRIAL.kind, experiment.namespace, {LABEL_EXPERIMENT: _name(obj)}
        )
    ]
    best = best_trial(objective, trials)
    metric = objective.objective_metric_name if objective else None
    return [
        ("Resume policy", spec.resume_policy or "Never"),
        ("Algorithm", spec.algorithm.algorithm_name),
        ("Objective", f"{objective.type} {metric} (goal {objective.goal})" if objective else ""),
        ("Budget", _budget(experiment)),
        (
            "Trials",
            f"{status.trials} ({status.trials_succeeded} succeeded, {status.trials_failed} "
            f"failed, {status.trials_running} running, {status.trials_pending} pending)",
        ),
        ("Best trial", f"{best.trial} ({metric}={best.value:g})" if best else "<none>"),
        ("Seed", experiment.metadata.annotations.get(ANNOTATION_SEED, "<none>")),
    ]


def _budget(experiment: Experiment) -> str:
    spec = experiment.spec
    return (
        f"maxTrialCount {spec.max_trial_count}, parallelTrialCount {spec.parallel_trial_count}, "
        f"maxFailedTrialCount {spec.max_failed_trial_count}"
    )


def _name(obj: Manifest) -> str:
    return str(obj["metadata"]["name"])


def _suggestion(cluster: FakeCluster, obj: Manifest) -> list[tuple[str, str]]:
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


def _timeline(cluster: FakeCluster, obj: Manifest, now: datetime) -> list[list[str]]:
    """Conditions (at their last transition) and Events about ``obj``, ordered by time."""
    meta = obj["metadata"]
    entries: list[Row] = [
        (
            str(c.get("lastTransitionTime", "")),
            "condition",
            f"{c.get('type')}={c.get('status')}",
            str(c.get("reason", "")),
            str(c.get("message", "")),
        )
        for c in (obj.get("status") or {}).get("conditions") or []
    ]
    entries += [
        (event.time, f"event {event.type}", event.reason, "", event.message)
        for event in cluster.events
        if (event.ref.kind, event.ref.namespace, event.ref.name)
        == (obj["kind"], meta.get("namespace"), meta["name"])
    ]
    entries.sort(key=lambda entry: parse_time(entry[0]) or now)
    return [
        [when, age(when, now), source, f"{what} ({reason})" if reason else what, message]
        for when, source, what, reason, message in entries
    ]
