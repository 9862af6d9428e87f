"""A Kubernetes object as plain JSON data, and the helpers every layer uses on one.

Kept apart from the resource models (``core/kube.py``) so that what only reads, lists or prints
objects (the fake API server's store, ``get``, ``describe``) does not import pydantic, which is
most of a short command's start-up.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

Manifest = dict[str, Any]
"""A Kubernetes object as JSON-ready data (what the API server and ``kubectl`` exchange)."""


@functools.lru_cache(maxsize=4096)
def format_time(value: datetime) -> str:
    """Kubernetes ``metav1.Time``: RFC 3339 in UTC with a ``Z`` and whole seconds.

    Cached: the same few timestamps (a condition's transition times) are formatted on every
    status a reconcile serialises.
    """
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def has_labels(obj: Manifest, labels: Mapping[str, str]) -> bool:
    """Whether ``obj`` carries every one of ``labels`` (an equality label selector; the empty
    selector matches everything)."""
    if not labels:
        return True
    held = obj["metadata"].get("labels") or {}
    return all(held.get(key) == value for key, value in labels.items())
