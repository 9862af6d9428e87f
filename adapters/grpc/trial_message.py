"""A ``Trial`` message read straight into the manifest ``codec.trial_manifest`` makes of it.

A restarted suggestion service sees every Trial of the Experiment for the first time in its
first call (5,000 at 5,000). Going through protobuf's JSON mapping (``json_format``, which
walks every field of every message in Python) and then ``trial_manifest`` cost about 40 µs a
Trial; reading the few fields a Trial has from the parsed message (C attributes) and building
the manifest directly costs a few. The objective, the same message in every Trial of an
Experiment, is converted once per distinct content. ``tests/property/test_trial_message.py``
holds the result equal to ``trial_manifest(decode("Trial", data))`` for any Trial.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from google.protobuf import json_format

from katib_resume.adapters.grpc.api import CLASSES, TRIAL_CONDITIONS
from katib_resume.adapters.grpc.codec import objective_manifest, phase_name
from katib_resume.core.manifest import Manifest

_TRIAL = CLASSES["Trial"]
_CONDITIONS = dict(enumerate(TRIAL_CONDITIONS))  # the enum's numbers, as ``api`` declares them
_OBJECTIVES: dict[bytes, Manifest] = {}
_KEPT_OBJECTIVES = 64
"""Distinct objectives remembered: one per Experiment served, in practice."""


def manifest_of(data: bytes) -> Manifest:
    """The Trial whose message is ``data``, as ``trial_manifest`` of its decoded dictionary:
    each field put in only when it is not at its default, as ``compact`` leaves them."""
    trial: Any = _TRIAL.FromString(data)  # a dynamic class: its fields are not typed
    spec, status = trial.spec, trial.status
    kube_spec: Manifest = {}
    _put(kube_spec, "objective", _objective(spec.objective))
    _put(kube_spec, "parameterAssignments", _pairs(spec.parameter_assignments.assignments))
    _put(kube_spec, "labels", dict(spec.labels))
    kube_status: Manifest = {}
    _put(kube_status, "startTime", status.start_time)
    _put(kube_status, "completionTime", status.completion_time)
    kube_status["condition"] = phase_name(_CONDITIONS.get(status.condition, ""))
    metrics = _pairs(status.observation.metrics)
    if metrics:
        kube_status["observation"] = {"metrics": metrics}
    return {"metadata": {"name": trial.name}, "spec": kube_spec, "status": kube_status}


def _put(manifest: Manifest, key: str, value: Any) -> None:
    if value:  # text, a list or a dict: only an empty one is at its default
        manifest[key] = value


def _pairs(items: Iterable[Any]) -> list[Manifest]:
    return [_pair(item.name, item.value) for item in items]


def _pair(name: str, value: str) -> Manifest:
    """``compact`` of the pair: both are text, so only an empty one is left out."""
    pair = {}
    if name:
        pair["name"] = name
    if value:
        pair["value"] = value
    return pair


def _objective(message: Any) -> Manifest:
    key = message.SerializeToString(deterministic=True)
    made = _OBJECTIVES.get(key)
    if made is None:
        wire = json_format.MessageToDict(message, preserving_proto_field_name=True)
        made = objective_manifest(wire)
        if len(_OBJECTIVES) >= _KEPT_OBJECTIVES:
            _OBJECTIVES.clear()
        _OBJECTIVES[key] = made
    return made
