"""A history of unknown order put in the order the saved state issued it, read from the bytes.

Katib's gRPC request carries the Experiment's Trials, not the Suggestion's list, and in no
useful order (the API server lists them by name; start times tie within a batch). A restart
compares the saved assignments with the history as bytes (``unparsed.py``), which needs the
history in issue order; the saved state knows that order, as its items' names, in order. So the
names are read from the saved bytes at C speed (one regular expression over them, no parse),
and the history sorted by them, items whose name the state does not hold last.

Nothing depends on the names being read right: the sorted history is then compared with the
saved items as before (bytes, or parsed and item by item), so a name missed or a history that
disagrees only fails that comparison, and the server rebuilds from the history.

In canonical JSON (sorted keys, no spaces) an item starts ``{"name":"...","parameterAssignments":``
and a parameter's value pair ``{"name":"...","value":``, and a quote inside a string is always
escaped: so ``{"name":"`` followed by a string and ``,"parameterAssignments":`` is an item's
start and nothing else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from katib_resume.core.kube import Manifest

_ITEM = re.compile(rb'\{"name":"((?:[^"\\]|\\.)*)","parameterAssignments":')
_LAST = float("inf")


def names(body: bytes) -> list[str]:
    """The names of the canonical items in ``body``, in order (escapes decoded)."""
    found = _ITEM.findall(body)
    if not any(b"\\" in name for name in found):
        return b"\n".join(found).decode().split("\n") if found else []
    return [json.loads(b'"' + name + b'"') for name in found]


def in_saved_order(history: Sequence[Manifest], body: bytes) -> list[Manifest]:
    """``history`` sorted by where each item's name stands in ``body`` (those not there last,
    in their order)."""
    position = {name: number for number, name in enumerate(names(body))}
    return sorted(history, key=lambda item: position.get(str(item.get("name", "")), _LAST))
