"""A history of unknown order put in the order the saved state issued it, read from the bytes.

Katib's gRPC request carries the Experiment's Trials, not the Suggestion's list, and in no
useful order (the API server lists them by name; start times tie within a batch). A restart
compares the saved assignments with the history as bytes (``unparsed.py``), which needs the
history in issue order; the saved state knows that order, as its items' names, in order. So the
names are read from the saved bytes at C speed (no parse: below),
and the history sorted by them, items whose name the state does not hold last.

Nothing depends on the names being read right: the sorted history is then compared with the
saved items as before (bytes, or parsed and item by item), so a name missed or a history that
disagrees only fails that comparison, and the server rebuilds from the history.

In canonical JSON (sorted keys, no spaces) an item is ``{"name":"...","parameterAssignments":
[...]}``, and a quote inside a string is always escaped: so ``,"parameterAssignments":`` is
found only where an item's name ends, and the last ``{"name":"`` before it is where that name
starts (the text between two items holds the earlier one's values, and their own ``name``s).
One split of the bytes at C speed, then a slice per item (1.2 ms at 5,000 assignments, where
a regular expression took 2 to 4 ms and a parse 3.7 ms).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import count, repeat
from operator import itemgetter

from katib_resume.core.manifest import Manifest

_END = b',"parameterAssignments":'
_START = b'{"name":"'
_NAME = itemgetter("name")


def names(body: bytes) -> list[str]:
    """The names of the canonical items in ``body``, in order (escapes decoded)."""
    found = [part[part.rfind(_START) + len(_START) : -1] for part in body.split(_END)[:-1]]
    if not any(b"\\" in name for name in found):
        return b"\n".join(found).decode(errors="replace").split("\n") if found else []
    return list(map(_unescaped, found))


def _unescaped(name: bytes) -> str:
    try:
        return str(json.loads(b'"' + name + b'"'))
    except ValueError:  # not a name (bytes no save writes): a name no history holds
        return ""


def in_saved_order(history: Sequence[Manifest], body: bytes) -> list[Manifest]:
    """``history`` sorted by where each item's name stands in ``body`` (those not there last,
    in their order); the history as it is if an item has no name."""
    position = dict(zip(names(body), count()))
    try:
        keys = list(map(position.get, map(_NAME, history), repeat(len(position))))
    except (KeyError, TypeError):  # an item without a name, or not a mapping
        return list(history)
    return list(map(history.__getitem__, sorted(range(len(keys)), key=keys.__getitem__)))
