"""A suggestion-state snapshot of an earlier version, written as ``docs/algorithms.md``
describes it: the payload's canonical JSON and its digest computed here, by hand, not by the
code under test (which must read what that version wrote)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import xxhash

FORMAT = "katib-resume/suggestion-state"


def write_snapshot(path: Path, payload: dict[str, Any], version: int, end: str = "") -> bytes:
    """The snapshot of ``payload`` in ``version`` at ``path`` (``end`` after the document: the
    newline the layout of a volume with a journal has); the payload's canonical bytes."""
    body = canonical(payload)
    key, digest = (
        ("sha256", hashlib.sha256(body).hexdigest())
        if version == 2
        else ("xxh3_128", xxhash.xxh3_128_hexdigest(body))
    )
    document = {"format": FORMAT, "payload": payload, key: digest, "version": version}
    path.write_text(json.dumps(document, sort_keys=True, separators=(",", ":")) + end)
    return body


def canonical(value: Any) -> bytes:
    """Sorted keys, no spaces: the bytes a snapshot's digest is of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def write_state(path: Path, state: Any, version: int) -> None:
    """The whole ``state`` (a ``SearchState``) as the lone snapshot of a ``version`` volume at
    ``path`` (its journal removed): an Optuna search's results column as the JSON list that
    versions 4 to 6 kept."""
    told = state.cursor.get("told") if isinstance(state.cursor, dict) else None
    cursor = state.cursor if told is None else {**state.cursor, "told": told.entries()}
    names = ("experiment", "algorithm", "seed", "space")
    payload = {name: getattr(state, name) for name in names}
    write_snapshot(path, {**payload, "cursor": cursor, "issued": list(state.issued)}, version)
    path.with_name("suggestion-state.journal").unlink(missing_ok=True)
