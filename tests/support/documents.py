"""Walking JSON documents: the paths a mutation test can aim at."""

from __future__ import annotations

from typing import Any


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and indexes) below ``node``, outermost first; the root is left out."""
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, child in node.items():
            found += paths(child, (*prefix, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found += paths(child, (*prefix, index))
    return found
