"""Katib's defaults for a metrics collector's source, by collector kind (the mutating webhook's
``setDefaultMetricsCollector``, docs/katib-contract.md#defaulting).

A Trial's collector is the Experiment's, copied when the Trial is made, so what is defaulted
here is what the sidecar and the local collector read, and what admission then judges
(``core.collector_rules``: a ``File`` collector needs an absolute path and a format). Like every
default it is total and idempotent: a value of the wrong shape is left for admission to judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

DEFAULT_FILE_PATH: Final = "/var/log/katib/metrics.log"
DEFAULT_TFEVENT_DIR: Final = "/var/log/katib/tfevent/"
DEFAULT_PROMETHEUS_PATH: Final = "/metrics"
DEFAULT_METRICS_PORT: Final = 8080
TEXT_FORMAT: Final = "TEXT"


def default_source(spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """``spec`` (a ``metricsCollectorSpec`` with a collector) with its kind's source defaults,
    or None when it needs none."""
    collector = spec.get("collector")
    kind = collector.get("kind") if isinstance(collector, Mapping) else None
    source = spec.get("source")
    if source is None:
        source = {}
    if not isinstance(source, Mapping):
        return None
    defaulted = _BY_KIND.get(kind, _unchanged)(source) if isinstance(kind, str) else source
    if defaulted is source:
        return None
    return {**spec, "source": defaulted}


def _file(source: Mapping[str, Any]) -> Mapping[str, Any]:
    system = source.get("fileSystemPath")
    if system is None:
        return {
            **source,
            "fileSystemPath": {"kind": "File", "path": DEFAULT_FILE_PATH, "format": TEXT_FORMAT},
        }
    if isinstance(system, Mapping) and not system.get("format"):
        return {**source, "fileSystemPath": {**system, "format": TEXT_FORMAT}}
    return source


def _tfevent(source: Mapping[str, Any]) -> Mapping[str, Any]:
    if source.get("fileSystemPath") is None:
        return {**source, "fileSystemPath": {"kind": "Directory", "path": DEFAULT_TFEVENT_DIR}}
    return source


def _prometheus(source: Mapping[str, Any]) -> Mapping[str, Any]:
    get = source.get("httpGet")
    if get is None:
        get = {}
    if not isinstance(get, Mapping):
        return source
    added: dict[str, Any] = {}
    if not get.get("path"):
        added["path"] = DEFAULT_PROMETHEUS_PATH
    if get.get("port") in (None, 0, "", "0"):
        added["port"] = DEFAULT_METRICS_PORT
    if not added and "httpGet" in source:
        return source
    return {**source, "httpGet": {**get, **added}}


def _unchanged(source: Mapping[str, Any]) -> Mapping[str, Any]:
    return source


_BY_KIND = {"File": _file, "TensorFlowEvent": _tfevent, "PrometheusMetric": _prometheus}
