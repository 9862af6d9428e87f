"""The columns ``katib-resume get`` prints per kind: Katib's printer columns and kubectl's.

Katib's CRDs print the TYPE and STATUS of the *last* condition (``.status.conditions[-1:]``) for
Experiments, Suggestions and Trials, and REQUESTED/ASSIGNED for Suggestions; the built-in kinds
print what kubectl prints for them. Keeping those columns means a user who knows
``kubectl get experiments`` reads these tables without learning anything new. ``-o wide`` adds
what the resume story needs at a glance: the budget and policy, the Trials' assignments and
objective values, the volumes' paths.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from katib_resume.app.cli.kinds import (
    DEPLOYMENT,
    EVENT,
    EXPERIMENT,
    PV,
    PVC,
    SERVICE,
    SUGGESTION,
    TRIAL,
    Resource,
)
from katib_resume.app.common.output import age
from katib_resume.app.embedded.driver import last_condition
from katib_resume.core.manifest import Manifest

Cell = Callable[[Manifest], str]
Column = tuple[str, Cell]
ACCESS_MODES = {
    "ReadWriteOnce": "RWO",
    "ReadOnlyMany": "ROX",
    "ReadWriteMany": "RWX",
    "ReadWriteOncePod": "RWOP",
}


def rows(
    resource: Resource, objects: Sequence[Manifest], now: datetime, *, wide: bool, namespaces: bool
) -> tuple[list[str], list[list[str]]]:
    """The headers and the rows of the table of ``objects``."""
    chosen = columns(resource, now, wide=wide)
    if namespaces and resource.namespaced:
        chosen = [("NAMESPACE", lambda o: str(o["metadata"].get("namespace", ""))), *chosen]
    headers = [header for header, _ in chosen]
    return headers, [[cell(obj) for _, cell in chosen] for obj in objects]


def columns(resource: Resource, now: datetime, *, wide: bool) -> list[Column]:
    if resource is EVENT:
        return _event_columns(now)
    name: Column = ("NAME", lambda o: str(o["metadata"]["name"]))
    created: Column = ("AGE", lambda o: age(o["metadata"].get("creationTimestamp"), now))
    own, extra = _KIND_COLUMNS[resource.kind]
    return [name, *own, created, *(extra if wide else [])]


def _get(obj: Manifest, *path: str) -> object:
    value: object = obj
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _text(*path: str, default: str = "<none>") -> Cell:
    def cell(obj: Manifest) -> str:
        value = _get(obj, *path)
        return default if value is None or value == "" else str(value)

    return cell


def _last(field: str) -> Cell:
    def cell(obj: Manifest) -> str:
        condition = last_condition(obj)
        return "" if condition is None else str(condition.get(field, ""))

    return cell


def _modes(*path: str) -> Cell:
    def cell(obj: Manifest) -> str:
        modes = _get(obj, *path)
        if not isinstance(modes, list) or not modes:
            return "<none>"
        return ",".join(ACCESS_MODES.get(str(mode), str(mode)) for mode in modes)

    return cell


def _ready(obj: Manifest) -> str:
    replicas = _get(obj, "spec", "replicas")
    return f"{_get(obj, 'status', 'readyReplicas') or 0}/{1 if replicas is None else replicas}"


def _ports(obj: Manifest) -> str:
    ports = _get(obj, "spec", "ports")
    if not isinstance(ports, list) or not ports:
        return "<none>"
    return ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in ports)


def _images(obj: Manifest) -> str:
    containers = _get(obj, "spec", "template", "spec", "containers")
    return ",".join(str(c.get("image")) for c in containers) if isinstance(containers, list) else ""


def _claim(obj: Manifest) -> str:
    ref = _get(obj, "spec", "claimRef")
    return f"{ref.get('namespace')}/{ref.get('name')}" if isinstance(ref, dict) else ""


def _trials(obj: Manifest) -> str:
    budget = _get(obj, "spec", "maxTrialCount")
    return f"{_get(obj, 'status', 'trials') or 0}/{'-' if budget is None else budget}"


def assignments(obj: Manifest) -> str:
    pairs = _get(obj, "spec", "parameterAssignments")
    if not isinstance(pairs, list):
        return "<none>"
    return ",".join(f"{p.get('name')}={p.get('value')}" for p in pairs)


def objective_value(obj: Manifest) -> str:
    """The Trial's objective metric as stored, under the strategy its objective names."""
    metric = _get(obj, "spec", "objective", "objectiveMetricName")
    strategies = _get(obj, "spec", "objective", "metricStrategies")
    strategy = "latest"
    for entry in strategies if isinstance(strategies, list) else ():
        if entry.get("name") == metric and entry.get("value"):
            strategy = str(entry["value"])
    metrics = _get(obj, "status", "observation", "metrics")
    for entry in metrics if isinstance(metrics, list) else ():
        if entry.get("name") == metric:
            return str(entry.get(strategy) or entry.get("latest") or "<none>")
    return "<none>"


def _event_columns(now: datetime) -> list[Column]:
    def involved(obj: Manifest) -> str:
        ref = obj["involvedObject"]
        return f"{str(ref['kind']).lower()}/{ref['name']}"

    return [
        ("LAST SEEN", lambda o: age(o.get("lastTimestamp"), now)),
        ("TYPE", _text("type")),
        ("REASON", _text("reason")),
        ("OBJECT", involved),
        ("MESSAGE", _text("message", default="")),
    ]


_KIND_COLUMNS: dict[str, tuple[list[Column], list[Column]]] = {
    EXPERIMENT.kind: (
        [("TYPE", _last("type")), ("STATUS", _last("status"))],
        [
            ("TRIALS", _trials),
            ("POLICY", _text("spec", "resumePolicy")),
            ("ALGORITHM", _text("spec", "algorithm", "algorithmName")),
        ],
    ),
    SUGGESTION.kind: (
        [
            ("TYPE", _last("type")),
            ("STATUS", _last("status")),
            ("REQUESTED", _text("spec", "requests", default="0")),
            ("ASSIGNED", _text("status", "suggestionCount", default="0")),
        ],
        [
            ("POLICY", _text("spec", "resumePolicy")),
            ("ALGORITHM", _text("spec", "algorithm", "algorithmName")),
        ],
    ),
    TRIAL.kind: (
        [("TYPE", _last("type")), ("STATUS", _last("status"))],
        [("OBJECTIVE", objective_value), ("ASSIGNMENTS", assignments)],
    ),
    DEPLOYMENT.kind: (
        [
            ("READY", _ready),
            ("AVAILABLE", _text("status", "availableReplicas", default="0")),
        ],
        [("IMAGES", _images)],
    ),
    SERVICE.kind: (
        [
            ("TYPE", _text("spec", "type", default="ClusterIP")),
            ("CLUSTER-IP", _text("spec", "clusterIP")),
            ("PORT(S)", _ports),
        ],
        [],
    ),
    PVC.kind: (
        [
            ("STATUS", _text("status", "phase", default="Pending")),
            ("VOLUME", _text("spec", "volumeName", default="")),
            ("CAPACITY", _text("status", "capacity", "storage", default="")),
            ("ACCESS MODES", _modes("status", "accessModes")),
            ("STORAGECLASS", _text("spec", "storageClassName")),
        ],
        [],
    ),
    PV.kind: (
        [
            ("CAPACITY", _text("spec", "capacity", "storage", default="")),
            ("ACCESS MODES", _modes("spec", "accessModes")),
            ("RECLAIM POLICY", _text("spec", "persistentVolumeReclaimPolicy")),
            ("STATUS", _text("status", "phase", default="Pending")),
            ("CLAIM", _claim),
            ("STORAGECLASS", _text("spec", "storageClassName")),
        ],
        [("PATH", _text("spec", "hostPath", "path"))],
    ),
}
