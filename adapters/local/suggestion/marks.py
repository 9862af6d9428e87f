"""Fingerprints of a snapshot's assignments' names and points, sorted, to look one up by bisection.

A restart's first call asks whether its new assignment's name is taken (``known.Names``) and,
for a search that never repeats a point, whether its new point was issued (``points.Seen``).
Both were answered by searching the saved bytes for what such an assignment writes: a pass at
memory speed, but over every assignment (0.1 to 0.15 ms each at 5,000), and together the
largest part of what a restart's cost grew by with the history.

So a snapshot's payload also holds ``marks``: a fingerprint of the name of each of its
assignments, and one of its point, each column sorted. A fingerprint is the first 24 bits of
the XXH3-64 digest of the bytes the search looks for (the name's canonical JSON string; the
point as its assignment writes it, ``"parameterAssignments":[...]}``), written in base64:
``WIDTH`` characters, no padding, so the column is a text a lookup bisects in place (13 steps
at 5,000), never decoded: 20 kB a column at 5,000. The columns are written with the snapshot,
under its checksum, and read with it; the checksum vouches that they are what a save wrote, as
it does for every byte of the state.

A lookup (``name_in``, ``point_in``) answers exactly what the search of all the bytes answers:

- a fingerprint not in the column means that no assignment the marks cover has those bytes,
  so only the bytes after them are searched (the journal's assignments, those of the history
  after the snapshot's: none, just after a compaction);
- a fingerprint in the column is confirmed by searching all the bytes, which says whether the
  bytes are there: another text has the same fingerprint in about 3 lookups in 10,000 at 5,000
  assignments (``WIDTH``), when the lookup costs what it did without marks.

The marks of a state are made when its snapshot is written (``encoded.payload``): those read
with the last snapshot cover its assignments, and only the assignments after them are
fingerprinted, found in the canonical bytes without parsing them (``_fingerprints``). A
snapshot without marks (written before they were) is searched whole, as before, until its
next compaction writes them.
"""

from __future__ import annotations

from base64 import b64encode
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from xxhash import xxh3_64_digest

WIDTH = 4
"""Characters of a fingerprint: 3 bytes (24 bits) of the digest, a whole base64 group. A
fingerprint found costs a search of every byte (to confirm it), so it needs to be rare, not
impossible: about 3 in 10,000 lookups of a text not there, at 5,000 assignments."""
_BYTES = 3
_OPEN = b'{"name":'
_VALUES = b',"parameterAssignments":'
_BETWEEN = b']},{"name":'
"""Between two canonical assignments, and nowhere else: a value is a string, so the only
``]}`` closes an assignment's values and the assignment, and a raw quote cannot stand inside
a string."""
_CLOSE = b"]}"
KEYS = frozenset(("names", "points"))


@dataclass(frozen=True, slots=True)
class Marks:
    """The fingerprints of the names (``names``) and points (``points``) of the assignments
    whose canonical bytes, joined by commas, are the first ``end`` bytes of a body."""

    names: str
    points: str
    end: int

    def field(self) -> dict[str, str]:
        """The payload's ``marks``."""
        return {"names": self.names, "points": self.points}


def read(value: Any, end: int) -> Marks:
    """The payload's ``marks``, covering the first ``end`` bytes of the assignments; raises
    ``ValueError`` if it is not two columns of fingerprints, one of each per assignment."""
    if not isinstance(value, dict) or value.keys() != KEYS:
        raise ValueError("the marks are not names and points")
    names, points = value["names"], value["points"]
    if not (isinstance(names, str) and isinstance(points, str)):
        raise ValueError("the marks are not texts")
    if len(names) != len(points) or len(names) % WIDTH or not (names + points).isascii():
        raise ValueError("the marks are not one fingerprint of each per assignment")
    if (len(names) == 0) != (end == 0):
        raise ValueError("the marks do not cover the assignments")
    return Marks(names, points, end)


def covering(body: bytes, marks: Marks | None) -> Marks:
    """The marks of every assignment of ``body`` (canonical assignments joined by commas):
    ``marks``, which cover its first ones, and the fingerprints of those after them; raises
    ``ValueError`` if ``body`` is not canonical assignments, or the marks do not end at one's
    end."""
    start = 0
    if marks is not None and marks.end:
        if marks.end == len(body):
            return marks
        if body[marks.end : marks.end + 1] != b",":
            raise ValueError("the marks do not end where an assignment does")
        start = marks.end + 1
    names, points = _fingerprints(body[start:])
    if marks is not None and marks.end:
        names, points = _merged(marks.names, names), _merged(marks.points, points)
    return Marks("".join(names), "".join(points), len(body))


def name_in(body: bytes, marks: Marks | None, name: bytes) -> bool:
    """Whether an assignment in ``body`` is named ``name`` (its canonical JSON string)."""
    needle = _OPEN + name + _VALUES
    if marks is None:
        return needle in body
    return _found(body, marks, needle, _has(marks.names, fingerprint(name)))


def point_in(body: bytes, marks: Marks | None, written: bytes) -> bool:
    """Whether an assignment in ``body`` has the values ``written`` (as it writes them:
    ``"parameterAssignments":[...]}``)."""
    if marks is None:
        return written in body
    return _found(body, marks, written, _has(marks.points, fingerprint(written)))


def fingerprint(data: bytes) -> str:
    """``data``'s fingerprint, ``WIDTH`` base64 characters."""
    return b64encode(xxh3_64_digest(data)[:_BYTES]).decode("ascii")


def _found(body: bytes, marks: Marks, needle: bytes, marked: bool) -> bool:
    """Whether ``needle`` is in ``body``: searched whole if the marks hold its fingerprint
    (to confirm it), else only after the bytes they cover (an occurrence lies within one
    assignment, so none straddles their end)."""
    return needle in body if marked else body.find(needle, marks.end) >= 0


class _Column:
    """A sorted column as the sequence of its fingerprints, read in place (for ``bisect``)."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    def __len__(self) -> int:
        return len(self._text) // WIDTH

    def __getitem__(self, index: int) -> str:
        return self._text[index * WIDTH : (index + 1) * WIDTH]


def _has(column: str, mark: str) -> bool:
    """Whether the sorted ``column`` holds ``mark``: a bisection, ``WIDTH`` characters a step."""
    index = bisect_left(_Column(column), mark)
    return column[index * WIDTH : (index + 1) * WIDTH] == mark


def _fingerprints(body: bytes) -> tuple[list[str], list[str]]:
    """The name and point fingerprints of the canonical assignments ``body``, each sorted;
    found by splitting the bytes between assignments, none parsed (``ValueError`` if they
    are not assignments)."""
    if not body:
        return [], []
    if not body.startswith(_OPEN) or not body.endswith(_CLOSE):
        raise ValueError("not canonical assignments")
    parts = body[len(_OPEN) :].split(_BETWEEN)
    last = len(parts) - 1
    names, points = bytearray(), bytearray()
    for index, part in enumerate(parts):
        at = part.index(_VALUES)
        names += xxh3_64_digest(part[:at])[:_BYTES]
        point = part[at + 1 :]
        points += xxh3_64_digest(point if index == last else point + _CLOSE)[:_BYTES]
    return sorted(_column(names)), sorted(_column(points))


def _column(digests: bytearray) -> list[str]:
    """Fingerprints of the ``_BYTES``-byte digests joined in ``digests``, encoded in one call
    (each ``_BYTES`` bytes are whole base64 groups)."""
    text = b64encode(digests).decode("ascii")
    return [text[start : start + WIDTH] for start in range(0, len(text), WIDTH)]


def _merged(column: str, new: list[str]) -> list[str]:
    """The fingerprints of the sorted ``column`` and the sorted ``new``, sorted (two runs,
    merged in one linear pass)."""
    return sorted([column[start : start + WIDTH] for start in range(0, len(column), WIDTH)] + new)
