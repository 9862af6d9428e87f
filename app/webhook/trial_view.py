"""The fields of a Trial the pod webhook reads, checked once.

The Trial CRD validates nothing (``x-kubernetes-preserve-unknown-fields``) and a Trial may be
written by hand, so every field is checked here and a bad one refuses the pod with a message
naming it, instead of Katib's nil dereference.
"""

from __future__ import annotations

from dataclasses import dataclass

from katib_resume.app.webhook.collector import Collector, Refused, collector_of
from katib_resume.core.katib import LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest


@dataclass(frozen=True, slots=True)
class TrialView:
    name: str
    namespace: str
    labels: dict[str, str]
    primary_container: str
    primary_pod_labels: dict[str, str] | None
    metrics: tuple[str, ...]
    objective_type: str
    stop_rules: tuple[str, ...]
    collector: Collector

    @property
    def experiment(self) -> str:
        return self.labels.get(LABEL_EXPERIMENT, "")


def trial_view(trial: Manifest, namespace: str, name: str) -> TrialView:
    """``trial``, read as ``namespace/name`` (the name it was fetched by, which is the run
    object's)."""
    meta, spec = _object(trial.get("metadata"), "metadata"), _object(trial.get("spec"), "spec")
    objective = _object(spec.get("objective"), "spec.objective")
    metric = objective.get("objectiveMetricName")
    if not isinstance(metric, str) or not metric:
        raise Refused("Trial spec.objective.objectiveMetricName: expected a metric name")
    primary = spec.get("primaryContainerName") or ""
    if not isinstance(primary, str):
        raise Refused("Trial spec.primaryContainerName: expected a string")
    pod_labels = spec.get("primaryPodLabels")
    rules = _list(spec.get("earlyStoppingRules"), "spec.earlyStoppingRules")
    return TrialView(
        name=name,
        namespace=namespace,
        labels=_labels(meta.get("labels"), "metadata.labels") or {},
        primary_container=primary,
        primary_pod_labels=_labels(pod_labels, "spec.primaryPodLabels"),
        metrics=(metric, *_strings(objective.get("additionalMetricNames"))),
        objective_type=_text(objective.get("type"), "spec.objective.type"),
        stop_rules=tuple(_rule(rule) for rule in rules),
        collector=collector_of(spec.get("metricsCollector")),
    )


def _rule(rule: object) -> str:
    """``<metric>;<value>;<comparison>;<startStep>``: the collector's ``-stop-rule``."""
    rule = _object(rule, "spec.earlyStoppingRules[]")
    fields = [_text(rule.get(key), f"spec.earlyStoppingRules[].{key}") for key in ("name", "value")]
    fields.append(_text(rule.get("comparison"), "spec.earlyStoppingRules[].comparison"))
    step = rule.get("startStep") or 0
    if not isinstance(step, int) or isinstance(step, bool):
        raise Refused("Trial spec.earlyStoppingRules[].startStep: expected an integer")
    return ";".join([*fields, str(step)])


def _labels(value: object, where: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise Refused(f"Trial {where}: expected a map of strings")
    return {str(key): str(item) for key, item in value.items()}


def _strings(value: object) -> tuple[str, ...]:
    items = _list(value, "spec.objective.additionalMetricNames")
    if not all(isinstance(item, str) for item in items):
        raise Refused("Trial spec.objective.additionalMetricNames: expected strings")
    return tuple(str(item) for item in items)


def _list(value: object, where: str) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refused(f"Trial {where}: expected a list")
    return value


def _text(value: object, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Refused(f"Trial {where}: expected a string")
    return value


def _object(value: object, where: str) -> Manifest:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Refused(f"Trial {where}: expected an object")
    return value
