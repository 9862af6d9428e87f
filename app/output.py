"""Printing Kubernetes objects as ``kubectl`` does: YAML or JSON, a ``List`` for several."""

from __future__ import annotations

import json
from collections.abc import Sequence

import yaml

from core.kube import Manifest


def as_list(items: Sequence[Manifest]) -> Manifest:
    return {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": list(items)}


def render(document: Manifest, output: str) -> str:
    if output == "json":
        return json.dumps(document, indent=2) + "\n"
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False)


def one_line(message: str) -> str:
    """Control characters (a newline in a key of the user's YAML) escaped: one line stays one."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)
