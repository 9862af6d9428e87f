"""The mutating webhook's answer: a JSON Patch (RFC 6902) from the object to its defaulted form.

The API server applies the patch to the object it sent, so the patch names only what defaulting
changed: a field set where it was absent or null, an item appended to a list (a metric strategy),
a field inside a list item (a parameter's ``distribution``). Unchanged fields are never
rewritten, so whatever the models do not read (and a newer Katib's fields) passes untouched.

A member the object lacks is ``add``ed; one it holds (``null`` included) is ``replace``d, or
patched inside when both are objects or lists. List items appended at the end use ``/-``; a list
that shrank, or two values of different types, are replaced whole, which keeps the function
total for any two JSON values.
"""

from __future__ import annotations

from typing import Any

from katib_resume.core.kube import Manifest


def json_patch(old: Any, new: Any, path: str = "") -> list[Manifest]:
    """Operations turning ``old`` into ``new`` (both JSON values); empty when they are equal."""
    if isinstance(old, dict) and isinstance(new, dict):
        return _object_patch(old, new, path)
    if isinstance(old, list) and isinstance(new, list):
        return _list_patch(old, new, path)
    if _same(old, new):
        return []
    return [{"op": "replace", "path": path, "value": new}]


def _object_patch(old: dict[str, Any], new: dict[str, Any], path: str) -> list[Manifest]:
    ops: list[Manifest] = [
        {"op": "remove", "path": f"{path}/{_escape(key)}"} for key in old if key not in new
    ]
    for key, value in new.items():
        where = f"{path}/{_escape(key)}"
        if key in old:
            ops += json_patch(old[key], value, where)
        else:
            ops.append({"op": "add", "path": where, "value": value})
    return ops


def _list_patch(old: list[Any], new: list[Any], path: str) -> list[Manifest]:
    if len(new) < len(old):
        return [{"op": "replace", "path": path, "value": new}]
    ops: list[Manifest] = []
    for index, (before, after) in enumerate(zip(old, new, strict=False)):
        ops += json_patch(before, after, f"{path}/{index}")
    ops += [{"op": "add", "path": f"{path}/-", "value": item} for item in new[len(old) :]]
    return ops


def _same(old: Any, new: Any) -> bool:
    """Scalar JSON equality: ``1``, ``1.0`` and ``true`` are equal in Python, not on the wire."""
    return type(old) is type(new) and old == new


def _escape(key: str) -> str:
    """RFC 6901: ``~`` and ``/`` inside a key."""
    return key.replace("~", "~0").replace("/", "~1")
