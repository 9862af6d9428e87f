"""Admission's metrics-collector rules (Katib's ``validateMetricsCollector``,
docs/katib-contract.md#field-rules): each collector kind's source must say where the metrics
are, and a ``metricsFormat`` filter must be a regular expression with two groups (the metric's
name and its value).

Where we differ, on purpose: Katib checks the filter of every kind but ``StdOut`` and ``Push``,
whose collector then fails on it in every Trial; the filter is checked for every kind here. The
kind ``None`` (no collector) is admitted. The expression is compiled by Python's ``re``, not by
Go's RE2, so an expression only one of them accepts is judged by ours, and the error's wording
after ``invalid filter:`` is Python's.
"""

from __future__ import annotations

import os.path
import re
from collections.abc import Mapping
from typing import Any, Final

from katib_resume.core.field_errors import FieldError, invalid, required

PATH: Final = "spec.metricsCollectorSpec"
SOURCE: Final = f"{PATH}.source"
TWO_GROUPS: Final = re.compile(r".*\(.*\).*\(.*\).*")
NO_SOURCE_KINDS: Final = frozenset({"StdOut", "Push", "None"})
FILE_FORMATS: Final = frozenset({"TEXT", "JSON"})


def collector_errors(spec: object) -> list[FieldError]:
    given = _mapping(spec)
    kind = _mapping(given.get("collector")).get("kind")
    source = _mapping(given.get("source"))
    if not isinstance(kind, str):
        kind = ""
    check = _BY_KIND.get(kind)
    if check is None and kind not in NO_SOURCE_KINDS:
        detail = f"invalid metrics collector kind: {kind}"
        errors = [invalid(f"{PATH}.collector.kind", kind, detail)]
    else:
        errors = check(given, source) if check is not None else []
    return [*errors, *_filter_errors(source)]


def _file(_: Mapping[str, Any], source: Mapping[str, Any]) -> list[FieldError]:
    system = _mapping(source.get("fileSystemPath"))
    errors = []
    if system.get("kind") != "File" or not _absolute(system.get("path")):
        detail = "file path where metrics file exists is required"
        errors.append(required(f"{SOURCE}.fileSystemPath.path", detail))
    form = system.get("format")
    if form not in FILE_FORMATS:
        detail = "format of metrics file is required for metrics collector"
        errors.append(required(f"{SOURCE}.fileSystemPath.format", detail))
    if form == "JSON" and source.get("filter") is not None:
        detail = "filter must be nil when format of metrics file is json"
        errors.append(invalid(f"{SOURCE}.filter", "", detail))
    return errors


def _tfevent(_: Mapping[str, Any], source: Mapping[str, Any]) -> list[FieldError]:
    system = _mapping(source.get("fileSystemPath"))
    errors = []
    if system.get("kind") != "Directory" or not _absolute(system.get("path")):
        detail = (
            "directory path where tensorflow event files exist is required by "
            ".spec.metricsCollectorSpec.source.fileSystemPath.path"
        )
        errors.append(required(SOURCE, detail))
    form = system.get("format")
    if form:
        errors.append(invalid(f"{SOURCE}.fileSystemPath.format", str(form), "must be empty"))
    return errors


def _prometheus(_: Mapping[str, Any], source: Mapping[str, Any]) -> list[FieldError]:
    get = _mapping(source.get("httpGet"))
    port, path = get.get("port"), get.get("path")
    errors = []
    if not _positive(port):
        detail = "must be a positive integer value for metrics collector kind: PrometheusMetric"
        errors.append(invalid(f"{SOURCE}.httpGet.port", "" if port is None else str(port), detail))
    if not isinstance(path, str) or not path.startswith("/"):
        detail = "path is invalid for metrics collector kind: PrometheusMetric"
        errors.append(invalid(f"{SOURCE}.httpGet.path", "" if path is None else str(path), detail))
    return errors


def _custom(spec: Mapping[str, Any], source: Mapping[str, Any]) -> list[FieldError]:
    errors = []
    if _mapping(spec.get("collector")).get("customCollector") is None:
        detail = "metrics collector kind: Custom is required"
        errors.append(required(f"{PATH}.collector.customCollector", detail))
    system = source.get("fileSystemPath")
    if system is not None:
        given = _mapping(system)
        if not _absolute(given.get("path")) or given.get("kind") not in ("Directory", "File"):
            detail = ".spec.metricsCollectorSpec.source is invalid"
            errors.append(invalid(f"{SOURCE}.fileSystemPath", "", detail))
    return errors


def _filter_errors(source: Mapping[str, Any]) -> list[FieldError]:
    formats = _mapping(source.get("filter")).get("metricsFormat")
    errors = []
    for form in formats if isinstance(formats, list) else []:
        text = str(form)
        try:
            re.compile(text)
        except re.error as error:
            detail = f"invalid filter: error parsing regexp: {error}: `{text}`"
            errors.append(invalid(f"{SOURCE}.filter.metricsFormat", text, detail))
            continue
        if TWO_GROUPS.search(text) is None:
            detail = "two top subexpressions are required"
            errors.append(invalid(f"{SOURCE}.filter.metricsFormat", text, detail))
    return errors


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _absolute(path: object) -> bool:
    return isinstance(path, str) and os.path.isabs(path)


def _positive(port: object) -> bool:
    if isinstance(port, bool):
        return False
    if isinstance(port, int):
        return port > 0
    return isinstance(port, str) and port.isdigit() and int(port) > 0


_BY_KIND = {
    "File": _file,
    "TensorFlowEvent": _tfevent,
    "PrometheusMetric": _prometheus,
    "Custom": _custom,
}
