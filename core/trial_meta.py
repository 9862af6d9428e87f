"""Trial parameters that reference the Trial's own metadata instead of a search parameter.

A trial parameter's ``reference`` may be ``${trialSpec.Name}``, ``Namespace``, ``Kind``,
``APIVersion``, ``Labels[key]`` or ``Annotations[key]`` (Katib's trial-metadata substitution:
upstream ``pkg/controller.v1beta1/experiment/manifest/generator.go`` ``applyParameters`` and
``examples/v1beta1/trial-template/trial-metadata-substitution.yaml``): its placeholder becomes
the Trial's name or namespace, or the run template's kind, apiVersion, label or annotation.

One module says what such a reference means, so that admission (which must know which
references need no search parameter, and which can never resolve) and the Trial's rendering
(``core/desired.py``) agree. A label or annotation the template does not carry can never
resolve: Katib admits it and then fails to create every Trial, in a loop, with the Experiment
left Running; admission denies it here, with the text Katib's controller would log.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

REFERENCE: Final = re.compile(r"\$\{trialSpec\.(.+?)\}")
INDEXED: Final = re.compile(r"(.+)\[(.+)]")
KEYS: Final = frozenset({"Name", "Namespace", "Kind", "APIVersion", "Labels", "Annotations"})
MAPS: Final = {"Labels": ("labels", "Label"), "Annotations": ("annotations", "Annotation")}
"""The keys that index a map of the template's metadata: its field and the word Katib's
message uses."""


@dataclass(frozen=True, slots=True)
class MetaReference:
    """A reference to the Trial's metadata: ``key`` one of ``KEYS``, ``index`` the label or
    annotation key in brackets (empty when there are none)."""

    key: str
    index: str = ""


def parse(reference: str) -> MetaReference | None:
    """The metadata a reference names, or None when it names a search parameter.

    As Katib reads it: the first ``${trialSpec.X}`` anywhere in the reference, ``X`` a key or a
    key with an index (``Name[x]`` is the name, its index ignored)."""
    found = REFERENCE.search(reference)
    if found is None:
        return None
    key = found.group(1)
    if key in KEYS:
        return MetaReference(key)
    indexed = INDEXED.search(key)
    if indexed is not None and indexed.group(1) in KEYS:
        return MetaReference(indexed.group(1), indexed.group(2))
    return None


def value(meta: MetaReference, name: str, namespace: str, run: Mapping[str, object]) -> str | None:
    """The text a metadata reference stands for in the Trial ``name`` of ``namespace`` made from
    the run template ``run``; None when the template has no such label or annotation."""
    if meta.key == "Name":
        return name
    if meta.key == "Namespace":
        return namespace
    if meta.key in ("Kind", "APIVersion"):
        field = run.get("kind" if meta.key == "Kind" else "apiVersion")
        return field if isinstance(field, str) else ""
    found = _metadata_map(run, MAPS[meta.key][0]).get(meta.index)
    return found if isinstance(found, str) else None


def unresolvable(reference: str, run: Mapping[str, object]) -> str | None:
    """Katib's text for a metadata reference no Trial of template ``run`` can resolve (a label
    or annotation the template does not carry), or None when it resolves or is no such
    reference."""
    meta = parse(reference)
    if meta is None or meta.key not in MAPS:
        return None
    if value(meta, "", "", run) is not None:
        return None
    word = MAPS[meta.key][1]
    return f"illegal reference of trial metadata: {reference}; failed to fetch {word}: {meta.index}"


def _metadata_map(run: Mapping[str, object], field: str) -> Mapping[str, object]:
    metadata = run.get("metadata")
    found = metadata.get(field) if isinstance(metadata, Mapping) else None
    return found if isinstance(found, Mapping) else {}
