"""The saved assignments kept as the bytes they were saved as, parsed only where a restart needs.

A restart used to parse every assignment on the volume (a dict and a list per assignment and
per value: 3.7 ms at 5,000), check each one's shape, then compare them item by item with the
history the controller sent, which holds the same assignments. Katib sends every assignment in
every request, already parsed: the restart needs the saved ones only to know that the history
is where they start, and the few saved after it (a response the controller never recorded).

So the snapshot and the journal records hand over their assignments as bytes (``Unparsed``):
the canonical JSON of each item (``encoded.canonical``), joined by commas, in order. ``resolve``
encodes the history in the same form (``orjson`` at C speed, 0.5 ms at 5,000: in its dicts' own
key order, the canonical one for items as ``assignment`` makes them, and only if that does not
match, with sorted keys) and compares bytes: if the history's encoding is where the saved
bytes start, at an item's boundary, the history's items *are* the saved ones (two JSON texts
that are the same bytes are the same values), and only the bytes after them are parsed, as new
items of our own. A history
whose items hold keys the volume does not (PBT's ``labels``: the controller keeps the annotated
items) is compared without them, reduced at C speed to the keys ``assignment`` writes.
Otherwise (another history, characters the two encoders write apart, such as a non-ASCII one
that ``canonical`` escapes) every saved item is parsed and the server compares them as before:
the shortcut only ever says "equal" when it is.

Nothing is left unchecked by it. The bytes not parsed are still read and checksummed whole
with the rest of the state (``state.py``, ``journal.py``: an XXH3 pass, 0.03 ms at 5,000), so a
flipped byte anywhere is found at restart, as before, and the state rebuilt from the history;
and they were compared, byte for byte, with the history. Their shape is not checked item by item
(``all_well_formed``) as a parsed item's is: the checksum shows that they are the bytes a save
wrote, and a save writes only assignments of that shape (``assignment``'s, or a history
reduced to it by ``normalized``); a history equal to them has their shape.

A history a store holds as its stored texts (a ``core.history.History``: the embedded runtime's
Suggestion, read by a writer) is not even encoded: its texts, joined by commas, are compared
with the saved bytes as they are, a chunk at a time (``_stored``). They are the canonical
encoding wherever the controller stored the items the service returned (compact, the keys in
``assignment``'s sorted order, ASCII); where they are not, they only fail to match, and the
history is decoded and compared as above. The server's issued items are then the history
itself, still not decoded (it stands in for the tuple, and decodes when an algorithm reads its
items).

The server then holds the history's items as its issued ones, as it holds its own items that the
embedded runtime passes back (``SuggestionServer.held``): neither side mutates an assignment.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import repeat
from operator import itemgetter
from typing import cast

import orjson

from katib_resume.adapters.local.suggestion.assignments import all_well_formed
from katib_resume.adapters.local.suggestion.marks import Marks
from katib_resume.core.history import History
from katib_resume.core.manifest import Manifest

COMMA = ord(",")
CHUNK = 256
"""Stored texts compared at a time (``_stored``): some 40 kB of assignments."""
_INNER = itemgetter(slice(1, -1))
_KEYS = ("name", "parameterAssignments")
_ITEM_KEYS = frozenset(_KEYS)
_PAIR = itemgetter(*_KEYS)


class Unparsed:
    """Saved assignments as canonical bytes: the items of a JSON list, without its brackets
    (each part read in place from the file it came from)."""

    __slots__ = ("_parts", "marks")

    def __init__(self, body: bytes | memoryview = b"", marked: Marks | None = None) -> None:
        self._parts: list[bytes | memoryview] = [body] if body else []
        self.marks = marked
        """The marks of the snapshot's items, ``body`` (``marks.py``), if it holds them."""

    def extend(self, items: bytes) -> None:
        """Add the items of a journal record (``items``: a canonical JSON list, brackets and
        all); raises ``ValueError`` if it is not bracketed as one."""
        if not (items.startswith(b"[") and items.endswith(b"]")):
            raise ValueError("not a JSON list")
        if len(items) > 2:
            self._parts.append(memoryview(items)[1:-1])

    def extend_all(self, records: Sequence[bytes]) -> bool:
        """``extend`` by each of ``records`` in turn, in C-level passes over them; ``False``,
        and nothing added, if one is not bracketed as a list (``extend`` then says which)."""
        if not all(map(bytes.startswith, records, repeat(b"["))):
            return False
        if not all(map(bytes.endswith, records, repeat(b"]"))):
            return False
        views: map[memoryview] = map(memoryview, records)
        self._parts.extend(filter(None, map(_INNER, views)))
        return True

    @property
    def body(self) -> bytes:
        """Every item's canonical bytes, joined by commas (``encoded``'s kept form), joined
        once."""
        joined = self._parts[0] if len(self._parts) == 1 else None
        if not isinstance(joined, bytes):
            joined = b",".join(self._parts)
            self._parts = [joined] if joined else []
        return joined

    def parse(self) -> tuple[Manifest, ...]:
        """Every item, parsed and its shape checked; raises ``ValueError``."""
        return parse_items(self.body)

    def resolve(self, history: Sequence[Manifest]) -> tuple[Manifest, ...]:
        """The saved items, those where ``history`` stands being ``history``'s own if it is
        where they start (see the module docstring); raises ``ValueError``."""
        return self.resolved(history)[0]

    def resolved(self, history: Sequence[Manifest]) -> tuple[tuple[Manifest, ...], bool]:
        """``resolve``, and whether the bytes proved ``history`` to be where the saved items
        start (``False``: every item parsed, the history not compared)."""
        body = self.body
        if isinstance(history, History):
            stored = _stored(body, history)
            if stored is not None:
                return stored, True
        items = _reduced(history) or history
        for sort in (False, True):  # the history's own key order first, then sorted
            found = _starting(body, items, sort)
            if found is not None:
                return found, True
        return parse_items(body), False


def _starting(body: bytes, items: Sequence[Manifest], sort: bool) -> tuple[Manifest, ...] | None:
    """The saved items if ``items``' encoding (``sort``: with sorted keys) is where ``body``
    starts, at an item's boundary: ``items``, and those after them parsed; else ``None``. The
    same bytes are the same values, whatever order the dicts' keys were written in."""
    held = encoding(items, sort=sort)
    if held is None or len(held) <= 2 or not body.startswith(memoryview(held)[1:-1]):
        return None
    size = len(held) - 2
    if len(body) == size:
        return tuple(items)
    if body[size] == COMMA:
        return tuple(items) + parse_items(body[size + 1 :])
    return None


def _stored(body: bytes, history: History) -> tuple[Manifest, ...] | None:
    """The saved items if ``history``'s stored texts (``History.texts``), joined by commas,
    are where ``body`` starts, at an item's boundary: ``history`` itself, extended by those
    after it, parsed; else ``None`` (as ``_starting``, without encoding or decoding the
    history). Compared ``CHUNK`` texts at a time, in place: a text of the whole would be a
    new buffer as large as the history (at 5,000 assignments 0.8 MB, whose fresh pages cost
    more than the comparison), each chunk's memory is reused by the next."""
    texts = history.texts()
    if not texts:
        return None
    at = 0
    for start in range(0, len(texts), CHUNK):
        if start:
            if body[at : at + 1] != b",":
                return None
            at += 1
        chunk = ",".join(texts[start : start + CHUNK]).encode()
        if not body.startswith(chunk, at):
            return None
        at += len(chunk)
    if len(body) == at:
        return _standing(history)
    if body[at] == COMMA:
        return _standing(history.extended(parse_items(body[at + 1 :])))
    return None


def _standing(history: History) -> tuple[Manifest, ...]:
    """``history`` as the server's issued tuple, which it stands in for: a ``History`` is an
    immutable sequence that answers what the server asks of its tuple (indexes, slices, ``==``,
    ``+ tuple``, ``len``), decoding its items when they are read, and refuses what it cannot
    (hashing, ``orjson`` and ``marshal``, ``tuple + history``) rather than answer wrongly."""
    return cast(tuple[Manifest, ...], history)


def _reduced(history: Sequence[Manifest]) -> Sequence[Manifest]:
    """The history's items without the keys ``assignment`` does not write (PBT's ``labels``,
    which the controller holds and the volume does not), made at C speed; ``[]`` if its first
    item has no other keys (a history with some elsewhere then only fails to match), or one
    has no name or values."""
    try:
        if not history or history[0].keys() == _ITEM_KEYS:
            return []
        return list(map(dict, map(zip, repeat(_KEYS), map(_PAIR, history))))
    except (AttributeError, KeyError, TypeError):  # not a dict, or a key missing
        return []


def encoding(items: Sequence[Manifest], *, sort: bool = True) -> bytes | None:
    """``items``' canonical JSON list, if ``orjson`` can write it (``None``: it cannot, e.g. a
    value of a type JSON has not); another text than ``canonical``'s for some strings (which
    then only fails to match). Unsorted (``sort=False``), the keys in each dict's own order:
    the canonical text where they are in sorted order already, as ``assignment`` makes them."""
    whole = items if type(items) in (list, tuple) else list(items)  # (a copy touches each)
    try:
        return orjson.dumps(whole, option=orjson.OPT_SORT_KEYS if sort else None)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None


def parse_items(body: bytes) -> tuple[Manifest, ...]:
    """The items of ``body`` (commas between canonical items), parsed by ``orjson`` or, for a
    text it refuses (a lone surrogate), ``json``; raises ``ValueError`` unless every one has
    ``assignment``'s shape."""
    if not body:
        return ()
    text = b"[" + body + b"]"
    try:
        items = orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            items = json.loads(text)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ValueError("the issued assignments are not JSON") from None
    if not isinstance(items, list) or not all_well_formed(items):
        raise ValueError("the issued assignments are malformed")
    return tuple(items)
