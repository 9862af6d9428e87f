"""The canonical bytes of a state's payload, re-encoding only the assignments that are new.

The state file holds the canonical JSON of the payload (sorted keys, no spaces: ``canonical``),
and a server saves after every call that changed it. The assignments are most of the payload
(Katib Experiments run thousands of Trials), and a call adds a few: encoding all of them again
would be most of the cost of a save (18 of 25 ms at 5,000, measured). So the encoding of each
search's ``issued`` tuple is kept, by the search's identity, and extended with the new
assignments only: a state's ``issued`` is never mutated and a new batch makes a new tuple that
starts with the old one's items (the same objects), which is checked by identity, item by item,
at C speed (or a ``core.history.History`` that extends the old one, the same stored texts:
``extends``).
Anything else (another tuple, a shorter one, other items) is encoded whole. A state read back
from its file keeps the file's own bytes as its encoding (``remember``), so the first save after
a restart does not encode every assignment either.

The bytes are exactly ``canonical(payload)`` (a unit test holds them to it): the payload's keys
are written in sorted order, each value by ``canonical``. The payload's ``marks`` are made from
the same kept encoding (``marks.py``): the marks a state was read with cover its first
assignments, and are kept with its encoding, so a save fingerprints only the assignments after
them.
"""

from __future__ import annotations

import json
import operator
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from katib_resume.adapters.local.suggestion import marks
from katib_resume.adapters.local.suggestion.column import packed
from katib_resume.core.history import History
from katib_resume.core.manifest import Manifest

KEPT = 32
"""Searches whose encoding is kept (a suggestion server serves one Experiment per search)."""


def canonical(payload: Any) -> bytes:
    """The canonical JSON of ``payload`` (sorted keys, no spaces), a results column packed
    (``column.packed``)."""
    text = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), allow_nan=False, default=packed
    )
    return text.encode()


class Kept:
    """The encoding of one ``issued`` tuple: its items, their canonical bytes joined
    (``body``), and the marks of its first items, if known (``marks.Marks``)."""

    __slots__ = ("body", "items", "marks")

    def __init__(
        self, items: tuple[Manifest, ...], body: bytes, marked: marks.Marks | None = None
    ) -> None:
        self.items, self.body, self.marks = items, body, marked


_kept: OrderedDict[tuple[Any, ...], Kept] = OrderedDict()
_lock = threading.Lock()  # servers of several Experiments may save at once


def payload(fields: Sequence[tuple[str, Any]], issued: tuple[Manifest, ...], key: Any) -> bytes:
    """``canonical`` of ``{**dict(fields), "issued": list(issued), "marks": ...}`` (the marks
    of every item: ``marks.covering``), reusing the encoding kept under ``key`` (the search's
    identity) for the items ``issued`` shares with it, and the marks kept with it."""
    kept = _issued(issued, key)
    kept.marks = marks.covering(kept.body, kept.marks)
    entries = [(name, canonical(value)) for name, value in fields]
    entries.append(("issued", b"[" + kept.body + b"]"))
    entries.append(("marks", canonical(kept.marks.field())))
    entries.sort()
    return b"{" + b",".join(canonical(name) + b":" + value for name, value in entries) + b"}"


def _issued(issued: tuple[Manifest, ...], key: Any) -> Kept:
    with _lock:
        kept = _kept.get(key)
    if kept is not None and kept.items is issued:
        return kept
    shared = _shared(kept, issued)
    new = b",".join(canonical(item) for item in issued[shared:])
    body, marked = new, None
    if kept is not None and shared:
        body, marked = (kept.body + b"," + new if new else kept.body), kept.marks
    entry = Kept(issued, body, marked)
    _keep(key, entry)
    return entry


def _keep(key: Any, entry: Kept) -> None:
    with _lock:
        _kept[key] = entry
        _kept.move_to_end(key)
        while len(_kept) > KEPT:
            _kept.popitem(last=False)


def _shared(kept: Kept | None, issued: tuple[Manifest, ...]) -> int:
    """How many leading items of ``issued`` the kept encoding covers: all of its items, if they
    are ``issued``'s first ones (the same objects, or a ``History`` extending them: the same
    stored items, proved without decoding them), else none."""
    if kept is None or not kept.items or len(kept.items) > len(issued):
        return 0
    if isinstance(issued, History) and issued.extends(kept.items):
        return len(kept.items)
    same = all(map(operator.is_, kept.items, issued))
    return len(kept.items) if same else 0


def remember(
    key: Any, issued: tuple[Manifest, ...], body: bytes, marked: marks.Marks | None = None
) -> None:
    """Keep ``body`` as the encoding of ``issued`` under ``key``: the items' canonical bytes
    joined by commas, as a state read back holds them (``unparsed.py``), and ``marked``, the
    marks of its first items it was read with."""
    _keep(key, Kept(issued, body, marked))


def kept(issued: tuple[Manifest, ...]) -> Kept | None:
    """The encoding kept of ``issued`` itself (the same tuple), if one is."""
    with _lock:
        return next((entry for entry in _kept.values() if entry.items is issued), None)
