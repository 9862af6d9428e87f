"""Katib's metrics-collector sidecar for one Trial: which container, with which arguments.

The pod webhook (``pod.py``) injects Katib's own collector images, so the sidecar has to be
started exactly as Katib starts it: the collector binaries parse these flags and nothing else
(docs/webhook.md#the-metrics-collector-sidecar). Everything here is pure: the Trial's
``metricsCollector`` and katib-config's ``runtime.metricsCollectors`` entry in, a
``corev1.Container`` out.

- Kinds ``StdOut`` and ``File`` run ``metrics-logger-and-collector``, ``TensorFlowEvent`` and
  ``PrometheusMetric`` run ``metrics-collector`` (Katib has no Prometheus image; a katib-config
  that names one gets it), ``Custom`` runs the Trial's ``customCollector`` as given, and
  ``Push`` and ``None`` get no sidecar.
- Arguments, in Katib's order: ``-t``, ``-m`` (objective first, ``;``-joined), ``-o-type``,
  ``-s-db``, ``-path``, ``-f``, ``-format``, ``-w``, one ``-stop-rule`` per rule, ``-s-earlystop``.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from katib_resume.core.config import ConfigError, KatibConfig, MetricsCollectorConfig
from katib_resume.core.manifest import Manifest
from katib_resume.core.names import CONFIG_MAP_NAME

STDOUT, FILE, TF_EVENT, PROMETHEUS = "StdOut", "File", "TensorFlowEvent", "PrometheusMetric"
CUSTOM, PUSH, NONE = "Custom", "Push", "None"
NO_SIDECAR = frozenset({PUSH, NONE})
WRAPPED = frozenset({STDOUT, FILE, TF_EVENT})
"""The kinds whose primary container's command is wrapped (``wrap.py``)."""
DEFAULT_FILE_PATH = "/var/log/katib/metrics.log"
FILE_KIND, DIRECTORY_KIND = "File", "Directory"
METRICS_VOLUME = "metrics-volume"
FILE_SIDECAR, OTHER_SIDECAR = "metrics-logger-and-collector", "metrics-collector"
TEXT = "TEXT"


class Refused(Exception):
    """The pod cannot be admitted; the message says why, ``code`` is the HTTP status."""

    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Collector:
    """A Trial's ``spec.metricsCollector``, checked: what the sidecar and the mounts need."""

    kind: str
    path: str = ""
    path_kind: str = ""
    file_format: str | None = None
    filters: tuple[str, ...] = ()
    custom: Manifest | None = None

    @property
    def mount(self) -> tuple[str, str]:
        """Katib's mount path and its kind: a file for StdOut and File, a directory for
        TensorFlowEvent, the source's own for Custom, none for the others."""
        if self.kind == STDOUT:
            return DEFAULT_FILE_PATH, FILE_KIND
        if self.kind == FILE:
            return self.path, FILE_KIND
        if self.kind == TF_EVENT:
            return self.path, DIRECTORY_KIND
        if self.kind == CUSTOM and self.path_kind:
            return self.path, self.path_kind
        return "", ""

    @property
    def directory(self) -> str:
        """Where the metrics volume is mounted: the mount path, or its parent for a file."""
        path, kind = self.mount
        return go_dir(path) if kind == FILE_KIND else path


def collector_of(spec: object) -> Collector:
    """``spec.metricsCollector`` of a Trial, or ``Refused`` naming the bad field."""
    spec = _object(spec, "spec.metricsCollector")
    collector = _object(spec.get("collector"), "spec.metricsCollector.collector")
    kind = collector.get("kind") or STDOUT
    if not isinstance(kind, str):
        raise Refused("Trial spec.metricsCollector.collector.kind: expected a string")
    source = _object(spec.get("source"), "spec.metricsCollector.source")
    found = Collector(kind, filters=_filters(source), custom=_custom(kind, collector))
    system = source.get("fileSystemPath")
    if system is not None:
        system = _object(system, "spec.metricsCollector.source.fileSystemPath")
        path, path_kind, fmt = (system.get(key) for key in ("path", "kind", "format"))
        found = _with_path(found, path, path_kind, fmt)
    if kind in (FILE, TF_EVENT) and not found.path:
        raise Refused(f"Trial spec.metricsCollector.source.fileSystemPath.path: required by {kind}")
    return found


def _with_path(found: Collector, path: object, kind: object, fmt: object) -> Collector:
    for name, value in (("path", path), ("kind", kind), ("format", fmt)):
        if value is not None and not isinstance(value, str):
            problem = f"spec.metricsCollector.source.fileSystemPath.{name}: expected a string"
            raise Refused(f"Trial {problem}")
    return Collector(
        found.kind, str(path or ""), str(kind or ""), str(fmt or ""), found.filters, found.custom
    )


def _filters(source: Manifest) -> tuple[str, ...]:
    raw = _object(source.get("filter"), "spec.metricsCollector.source.filter").get("metricsFormat")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise Refused("Trial spec.metricsCollector.source.filter.metricsFormat: expected strings")
    return tuple(raw)


def _custom(kind: str, collector: Manifest) -> Manifest | None:
    if kind != CUSTOM:
        return None
    custom = collector.get("customCollector")
    if not isinstance(custom, dict) or not isinstance(custom.get("name"), str):
        raise Refused("Trial spec.metricsCollector.collector.customCollector: a container needed")
    return custom


def collector_config(config: KatibConfig, kind: str) -> MetricsCollectorConfig:
    """katib-config's entry for ``kind`` (the last one wins), with Katib's refusals."""
    entries = [e for e in config.runtime.metrics_collectors if e.kind == kind]
    if not entries:
        raise ConfigError(
            f"failed to find metrics collector config for kind: {kind} in ConfigMap: "
            f"{CONFIG_MAP_NAME}"
        )
    if not entries[-1].image.strip():
        raise ConfigError(f"required value for image configuration of metrics collector: {kind}")
    return entries[-1]


@dataclass(frozen=True, slots=True)
class SidecarInputs:
    """What the sidecar's arguments say about the Trial, besides its collector."""

    trial: str
    metrics: tuple[str, ...]
    objective_type: str
    db_manager: str
    stop_rules: tuple[str, ...] = ()
    early_stopping: str = ""


def sidecar_args(inputs: SidecarInputs, collector: Collector, wait_all: bool | None) -> list[str]:
    args = ["-t", inputs.trial, "-m", ";".join(inputs.metrics), "-o-type", inputs.objective_type]
    args += ["-s-db", inputs.db_manager]
    path, _ = collector.mount
    if path:
        args += ["-path", path]
    if collector.filters:
        args += ["-f", ";".join(collector.filters)]
    if collector.kind == FILE and collector.file_format is not None:
        args += ["-format", collector.file_format]
    if collector.kind == STDOUT:
        args += ["-format", TEXT]
    if wait_all is not None:
        args += ["-w", "true" if wait_all else "false"]
    for rule in inputs.stop_rules:
        args += ["-stop-rule", rule]
    if inputs.stop_rules:
        args += ["-s-earlystop", inputs.early_stopping]
    return args


def sidecar(
    inputs: SidecarInputs, collector: Collector, entry: MetricsCollectorConfig, copied: Any
) -> Manifest:
    """The container Katib injects; ``copied`` is container 0's securityContext to copy, if any."""
    container: Manifest = {
        "name": FILE_SIDECAR if collector.kind in (STDOUT, FILE) else OTHER_SIDECAR,
        "image": entry.image,
        "args": sidecar_args(inputs, collector, entry.wait_all_processes),
        "imagePullPolicy": entry.image_pull_policy,
        "resources": entry.resources.model_dump(mode="json", by_alias=True),
    }
    if isinstance(copied, dict):
        container["securityContext"] = copied
    return container


def go_dir(path: str) -> str:
    """Go's ``filepath.Dir``: ``.`` rather than an empty string for a bare file name."""
    parent = posixpath.dirname(path)
    return posixpath.normpath(parent) if parent else "."


def _object(value: object, where: str) -> Manifest:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Refused(f"Trial {where}: expected an object")
    return value
