"""The previous state format, read once to migrate it: one ``cluster.json`` per state directory.

It held everything in one JSON document, written when a command ended: the objects, the counters,
the watch log and its base, the Kubernetes Events, the clock and the world's settings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from katib_resume.adapters.fake.store import Store

STATE_FILE = "cluster.json"
FORMAT = 1

Snapshot = tuple[Store, Sequence[dict[str, Any]], dict[str, Any] | None]


def read(path: Path) -> Snapshot:
    """The store, Events and world's state of ``path``; ``ValueError`` and friends if it is not
    a state file of this format."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"unsupported format {found!r} (expected {FORMAT})")
    events = [dict(e) for e in data["events"]]
    return Store.from_dict(data["store"]), events, {"clock": data["clock"], "world": data["world"]}
