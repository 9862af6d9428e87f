"""The saved assignments kept as the bytes they were saved as, parsed only where a restart needs.

A restart used to parse every assignment on the volume (a dict and a list per assignment and
per value: 3.7 ms at 5,000), check each one's shape, then compare them item by item with the
history the controller sent, which holds the same assignments. Katib sends every assignment in
every request, already parsed: the restart needs the saved ones only to know that the history
is where they start, and the few saved after it (a response the controller never recorded).

So the snapshot and the journal records hand over their assignments as bytes (``Unparsed``):
the canonical JSON of each item (``encoded.canonical``), joined by commas, in order. ``resolve``
encodes the history in the same form (``orjson`` with sorted keys, at C speed: 0.6 ms at 5,000)
and compares bytes: if the history's encoding is where the saved bytes start, at an item's
boundary, the history's items *are* the saved ones (two JSON texts that are the same bytes are
the same values), and only the bytes after them are parsed, as new items of our own. Otherwise
(another history, items with other keys such as ``labels``, characters the two encoders write
apart, such as a non-ASCII one that ``canonical`` escapes) every saved item is parsed and the
server compares them as before: the shortcut only ever says "equal" when it is.

Nothing is left unchecked by it. The bytes not parsed are still read and checksummed whole
with the rest of the state (``state.py``, ``journal.py``: a SHA-256 pass, 0.4 ms at 5,000), so a
flipped byte anywhere is found at restart, as before, and the state rebuilt from the history;
and they were compared, byte for byte, with the history. Their shape is not checked item by item
(``all_well_formed``) as a parsed item's is: the checksum shows that they are the bytes a save
wrote, and a save writes only assignments of that shape (``assignment``'s, or a history
reduced to it by ``normalized``); a history equal to them has their shape.

The server then holds the history's items as its issued ones, as it holds its own items that the
embedded runtime passes back (``SuggestionServer.held``): neither side mutates an assignment.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import orjson

from katib_resume.adapters.local.suggestion.assignments import all_well_formed
from katib_resume.core.kube import Manifest

COMMA = ord(",")


class Unparsed:
    """Saved assignments as canonical bytes: the items of a JSON list, without its brackets."""

    __slots__ = ("_parts",)

    def __init__(self, body: bytes = b"") -> None:
        self._parts = [body] if body else []

    def extend(self, items: bytes) -> None:
        """Add the items of a journal record (``items``: a canonical JSON list, brackets and
        all); raises ``ValueError`` if it is not bracketed as one."""
        if not (items.startswith(b"[") and items.endswith(b"]")):
            raise ValueError("not a JSON list")
        if len(items) > 2:
            self._parts.append(items[1:-1])

    @property
    def body(self) -> bytes:
        """Every item's canonical bytes, joined by commas (``encoded``'s kept form)."""
        return self._parts[0] if len(self._parts) == 1 else b",".join(self._parts)

    def parse(self) -> tuple[Manifest, ...]:
        """Every item, parsed and its shape checked; raises ``ValueError``."""
        return parse_items(self.body)

    def resolve(self, history: Sequence[Manifest]) -> tuple[Manifest, ...]:
        """The saved items, those where ``history`` stands being ``history``'s own if it is
        where they start (see the module docstring); raises ``ValueError``."""
        body = self.body
        held = encoding(history)
        if not held or not body.startswith(held):
            return parse_items(body)
        if len(body) == len(held):
            return tuple(history)
        if body[len(held)] != COMMA:
            return parse_items(body)
        return tuple(history) + parse_items(body[len(held) + 1 :])


def encoding(items: Sequence[Manifest]) -> bytes | None:
    """``items``' canonical bytes joined by commas, if ``orjson`` can write them (``None``:
    it cannot, e.g. a value of a type JSON has not); another text than ``canonical``'s for
    some strings (which then only fails to match)."""
    try:
        return orjson.dumps(list(items), option=orjson.OPT_SORT_KEYS)[1:-1]
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
