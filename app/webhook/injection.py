"""Katib's mutation of a Trial's pod, step by step in Katib's order (docs/webhook.md#pods).

1. labels: the pod's, the Trial's on top, ``katib.kubeflow.org/trial: <trial>``;
2. env ``KATIB_TRIAL_NAME`` (from that label) in the primary container, which every pod of the
   Trial must have;
3. a pod that lacks one of ``primaryPodLabels``, and a ``Push`` or ``None`` collector: done;
4. the sidecar (``collector.py``), appended; the suggestion volume when the Suggestion's
   ``suggestion_trial_dir`` setting says so; ``shareProcessNamespace``; the ``metrics-volume``
   emptyDir in the sidecar and the primary container; the primary command wrapped (``wrap.py``).

What the steps read besides the pod and the Trial (katib-config's collector entry, the
Suggestion, the Experiment) comes through ``Sources``, each read only by the step that needs it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from katib_resume.app.webhook.collector import (
    CUSTOM,
    METRICS_VOLUME,
    NO_SIDECAR,
    WRAPPED,
    Refused,
    SidecarInputs,
    sidecar,
)
from katib_resume.app.webhook.trial_view import TrialView
from katib_resume.app.webhook.wrap import wrapped
from katib_resume.core.config import MetricsCollectorConfig
from katib_resume.core.katib import EARLY_STOPPING_PORT
from katib_resume.core.katib_trial import LABEL_TRIAL
from katib_resume.core.manifest import Manifest
from katib_resume.core.names import service_name

TRIAL_ENV = "KATIB_TRIAL_NAME"
SUGGESTION_VOLUME = "suggestion-volume"
TRIAL_DIR_SETTING = "suggestion_trial_dir"
MISSING_PRIMARY = "unable to find primary container in mutated pod containers"


@dataclass(frozen=True, slots=True)
class Sources:
    collector_config: Callable[[str], MetricsCollectorConfig]
    suggestion: Callable[[str], Manifest]
    experiment: Callable[[str], Manifest]
    db_manager: str
    inject_security_context: Callable[[], bool] = lambda: False


def inject(pod: Manifest, trial: TrialView, sources: Sources) -> Manifest:
    """The pod as Katib's webhook would let it be created; ``Refused`` when it must not be."""
    mutated = copy.deepcopy(pod)
    metadata = mutated.setdefault("metadata", {})
    given = metadata.get("labels") or {}
    metadata["labels"] = {**given, **trial.labels, LABEL_TRIAL: trial.name}
    containers = mutated["spec"]["containers"]
    primary = _primary(containers, trial.primary_container)
    primary["env"] = [*(primary.get("env") or []), _trial_env()]
    wanted = trial.primary_pod_labels
    if wanted is not None and any(given.get(k) != v for k, v in wanted.items()):
        return mutated
    if trial.collector.kind in NO_SIDECAR:
        return mutated
    _add_collector(mutated, primary, trial, sources)
    return mutated


def _add_collector(pod: Manifest, primary: Manifest, trial: TrialView, sources: Sources) -> None:
    """Steps 4 on: the sidecar, the volumes, the shared PID namespace, the wrapped command."""
    collector, containers = trial.collector, pod["spec"]["containers"]
    added = _sidecar(trial, sources, containers[0].get("securityContext"))
    containers.append(added)
    _suggestion_volume(pod, primary, trial, sources)
    pod["spec"]["shareProcessNamespace"] = True
    if collector.mount[0]:
        _metrics_volume(pod, {added["name"], trial.primary_container}, collector.directory)
    if collector.kind in WRAPPED:
        index = next(i for i, c in enumerate(containers) if c is primary)
        path, directory, rules = collector.mount[0], collector.directory, bool(trial.stop_rules)
        containers[index] = wrapped(primary, collector.kind, path, directory, rules)


def _primary(containers: list[Manifest], name: str) -> Manifest:
    for container in containers:
        if container.get("name") == name:
            return container
    names = [str(c.get("name")) for c in containers]
    raise Refused(f"{MISSING_PRIMARY}: primary container: {name!r}, pod containers: {names}")


def _trial_env() -> Manifest:
    path = f"metadata.labels['{LABEL_TRIAL}']"
    return {"name": TRIAL_ENV, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _sidecar(trial: TrialView, sources: Sources, security: object) -> Manifest:
    if trial.collector.kind == CUSTOM:
        assert trial.collector.custom is not None, "collector_of requires customCollector"
        return copy.deepcopy(trial.collector.custom)
    entry = sources.collector_config(trial.collector.kind)
    early_stopping = _early_stopping(trial, sources) if trial.stop_rules else ""
    inputs = SidecarInputs(
        trial.name, trial.metrics, trial.objective_type, sources.db_manager,
        trial.stop_rules, early_stopping,
    )  # fmt: skip
    copied = copy.deepcopy(security) if sources.inject_security_context() else None
    return sidecar(inputs, trial.collector, entry, copied)


def _early_stopping(trial: TrialView, sources: Sources) -> str:
    """``<suggestion>-<algorithm>.<namespace>:6788``, the Suggestion named by the label."""
    if not trial.experiment:
        raise Refused("invalid suggestion name")
    name, algorithm = trial.experiment, _algorithm(sources.suggestion(trial.experiment))
    return f"{service_name(name, algorithm)}.{trial.namespace}:{EARLY_STOPPING_PORT}"


def _suggestion_volume(
    pod: Manifest, primary: Manifest, trial: TrialView, sources: Sources
) -> None:
    """Katib's PBT volume: the Suggestion's PVC, at ``suggestion_trial_dir``, one subPath per
    Trial. The Experiment and the Suggestion must both exist (Katib reads both)."""
    sources.experiment(trial.experiment)
    suggestion = sources.suggestion(trial.experiment)
    path = _trial_dir(suggestion)
    if not path:
        return
    claim = service_name(trial.experiment, _algorithm(suggestion))
    subpath = f"{trial.experiment}/{trial.name}"
    mount = {"name": SUGGESTION_VOLUME, "mountPath": path, "subPath": subpath}
    _append(primary, "volumeMounts", mount)
    volume = {"name": SUGGESTION_VOLUME, "persistentVolumeClaim": {"claimName": claim}}
    _append(pod["spec"], "volumes", volume)


def _metrics_volume(pod: Manifest, containers: set[str], directory: str) -> None:
    for container in pod["spec"]["containers"]:
        if container.get("name") in containers:
            _append(container, "volumeMounts", {"name": METRICS_VOLUME, "mountPath": directory})
    _append(pod["spec"], "volumes", {"name": METRICS_VOLUME, "emptyDir": {}})


def _append(owner: Manifest, field: str, item: Manifest) -> None:
    """Append to a list field that may be absent or null."""
    owner[field] = [*(owner.get(field) or []), item]


def _trial_dir(suggestion: Manifest) -> str:
    """The first non-empty ``suggestion_trial_dir`` of the Suggestion's algorithm settings."""
    settings = _algorithm_spec(suggestion).get("algorithmSettings")
    for setting in settings if isinstance(settings, list) else ():
        if isinstance(setting, dict) and setting.get("name") == TRIAL_DIR_SETTING:
            value = setting.get("value")
            if isinstance(value, str) and value:
                return value
    return ""


def _algorithm(suggestion: Manifest) -> str:
    name = _algorithm_spec(suggestion).get("algorithmName")
    if not isinstance(name, str) or not name:
        raise Refused("Suggestion spec.algorithm.algorithmName: expected an algorithm name")
    return name


def _algorithm_spec(suggestion: Manifest) -> Manifest:
    spec = suggestion.get("spec")
    algorithm = spec.get("algorithm") if isinstance(spec, dict) else None
    return algorithm if isinstance(algorithm, dict) else {}
