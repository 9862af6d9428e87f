"""The seed design's local volume mode: a claim of the default suggestion storage class brings
its own hostPath PV.

Katib's original "Resume Experiment from Volume" (#1275, #1291;
docs/katib-contract.md#local-volumes) created, for a PVC of storage class ``katib-suggestion``, a PV
labelled ``type: local`` with a hostPath under ``/tmp/katib/suggestions``, so that ``FromVolume``
worked on a cluster without a dynamic provisioner. Katib dropped it in #1552; single-node and
on-premise clusters still want it.

This module only says *what* such a PV asks for: its storage class, the claim's access modes and
size, the path prefix (``localVolumePathPrefix`` of the suggestion entry) and the labels. The PV
itself is built by ``core.volumes`` on the same path as a configured ``persistentVolumeSpec``
(pre-bound, reclaim ``Delete``, owner annotations, ``<prefix>/<pv-name>``), so the two modes can
never drift apart; a configured ``persistentVolumeSpec`` always wins over this mode.

The PV has no node affinity: the controller cannot know which node the directory lives on.
That is exact on a single-node cluster; elsewhere ``docs/local-volumes.md`` says what to do.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from katib_resume.core.config import SuggestionConfig
from katib_resume.core.katib import (
    DEFAULT_STORAGE,
    DEFAULT_SUGGESTION_STORAGE_CLASS,
    LOCAL_VOLUME_LABELS,
)
from katib_resume.core.manifest import Manifest


@dataclass(frozen=True, slots=True)
class VolumeSource:
    """The PV a suggestion entry asks for: its spec (``hostPath.path`` is a prefix) and labels."""

    spec: Manifest = field(hash=False)
    labels: dict[str, str] | None = field(hash=False)


def is_local(config: SuggestionConfig) -> bool:
    """The entry's claim uses the default suggestion storage class (a configured
    ``persistentVolumeSpec`` still wins over the local PV: ``volume_source``)."""
    storage_class = config.persistent_volume_claim_spec.storage_class_name
    return storage_class == DEFAULT_SUGGESTION_STORAGE_CLASS


def local_source(config: SuggestionConfig) -> VolumeSource:
    """The local PV of the entry: same class, access modes and size as its claim."""
    claim = config.persistent_volume_claim_spec.spec()
    requests = (claim.get("resources") or {}).get("requests") or {}
    spec: Manifest = {
        "storageClassName": DEFAULT_SUGGESTION_STORAGE_CLASS,
        "accessModes": list(claim["accessModes"]),
        "capacity": {"storage": requests.get("storage", DEFAULT_STORAGE)},
        "hostPath": {"path": config.local_volume_path_prefix, "type": "DirectoryOrCreate"},
    }
    labels = dict(LOCAL_VOLUME_LABELS) | (config.persistent_volume_labels or {})
    return VolumeSource(spec, labels)


def volume_source(config: SuggestionConfig) -> VolumeSource | None:
    """The PV the entry asks for: its ``persistentVolumeSpec``, else the local one, else none."""
    if not config.persistent_volume_spec.is_empty:
        labels = config.persistent_volume_labels
        copied = dict(labels) if labels is not None else None
        return VolumeSource(config.persistent_volume_spec.spec(), copied)
    if is_local(config):
        return local_source(config)
    return None


def with_local_volumes(data: Mapping[str, Any], prefix: str | None = None) -> Manifest:
    """A copy of katib-config content (as loaded from YAML) in the local volume mode.

    Every suggestion entry that has neither a ``persistentVolumeSpec`` nor a storage class of its
    own claims ``katib-suggestion``; anything else is left as written, malformed parts included
    (``core.config.parse_katib_config`` reports those). With ``prefix``, every entry that then
    gets the local PV (class ``katib-suggestion``, no ``persistentVolumeSpec``) has it as its
    ``localVolumePathPrefix``. The embedded runtime's default config.
    """
    result = copy.deepcopy(dict(data))
    runtime = result.get("runtime")
    entries = runtime.get("suggestions") if isinstance(runtime, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("persistentVolumeSpec"):
            continue
        claim = entry.setdefault("persistentVolumeClaimSpec", {})
        if isinstance(claim, dict):
            claim.setdefault("storageClassName", DEFAULT_SUGGESTION_STORAGE_CLASS)
            local = claim["storageClassName"] == DEFAULT_SUGGESTION_STORAGE_CLASS
            if prefix is not None and local:
                entry["localVolumePathPrefix"] = prefix
    return result
