"""JSON merge patches (RFC 7386) that turn one version of an object into another.

Writes are merge patches rather than PUTs: a patch carries only what changed, so two writers
that touch different parts of an object (our status, a user's label) do not undo each other,
and a patch that carries ``metadata.resourceVersion`` is refused with 409 when the object
moved on, which gives the port's "replace, unless stale" semantics. A merge patch cannot say
"remove" except with ``null``, so the diff names every key the old version had and the new one
lacks; lists are replaced whole, as the RFC says.
"""

from __future__ import annotations

from typing import Any

from katib_resume.core.manifest import Manifest


def merge_diff(old: Any, new: Any) -> Any:
    """The merge patch that turns ``old`` into ``new`` (``{}`` when they are equal)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    patch: Manifest = {}
    for key in old.keys() - new.keys():
        patch[key] = None
    for key, value in new.items():
        if key not in old:
            patch[key] = value
        elif old[key] != value:
            sub = merge_diff(old[key], value)
            patch[key] = value if sub is None else sub
    return patch


def guarded(patch: Manifest, resource_version: str | None) -> Manifest:
    """``patch`` with ``metadata.resourceVersion`` as an optimistic-concurrency precondition."""
    if resource_version is None:
        return patch
    meta = dict(patch.get("metadata") or {})
    meta["resourceVersion"] = resource_version
    return {**patch, "metadata": meta}
