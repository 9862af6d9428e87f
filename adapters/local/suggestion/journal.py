"""The journal beside the state snapshot: length-framed, checksummed records, appended.

``suggestion-state.journal`` is a header line and then one record per save since the snapshot::

    katib-resume/suggestion-journal 1 <snapshot's sha256>\\n
    <length> <sha256> <body>\\n
    ...

The header names the format, its version, and the snapshot it continues: the ``sha256`` of the
snapshot's payload, as the snapshot file holds it. A journal naming another snapshot is *stale*
(left behind by a compaction that replaced the snapshot) and holds nothing of value. A body is one
save's change (``state_store.py``: canonical JSON texts); its ``sha256`` is the digest of the
previous record's digest (the header's for the first) followed by the body, so each record is
checked alone and a record cannot be moved, repeated or left out unnoticed. A body holds no
raw line break (JSON escapes it in a string): every record is exactly one line.

A crash while a record is appended leaves a prefix of it at the end of the file: bytes after the
last good record with no line break in them (a record's line break is its last byte, written
last). That *torn* tail is dropped, as if that save never happened (the guarantee an atomic
rename gives: the old state or the new one). A bad record that ends in a line break is not what a
crash leaves, whether more lines follow it or not (a flipped line break can join two records
into one line that ends the file): the journal is ``Damaged``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

MAGIC = b"katib-resume/suggestion-journal"
VERSION = 1


class Damaged(ValueError):
    """The journal is not one this module writes, or a record inside it is damaged."""


@dataclass(frozen=True, slots=True)
class Scan:
    """A journal's good records: their bodies, where the last ends, and its digest."""

    bodies: list[bytes]
    end: int
    last: str


def header(base: str) -> bytes:
    line = b"%s %d %s" % (MAGIC, VERSION, base.encode())
    return b"%s %s\n" % (line, hashlib.sha256(line).hexdigest().encode())


def frame(body: bytes, previous: str) -> tuple[bytes, str]:
    """One record's line for ``body`` after the record (or header) of digest ``previous``,
    and its own digest."""
    digest = _digest(previous, body)
    return b"%d %s %s\n" % (len(body), digest.encode(), body), digest


def _digest(previous: str, body: bytes) -> str:
    chained = hashlib.sha256(previous.encode())
    chained.update(body)
    return chained.hexdigest()


def scan(data: bytes, base: str) -> Scan | None:
    """The good records of the journal ``data`` continuing the snapshot of digest ``base``;
    ``None`` if it continues another snapshot. Raises ``Damaged`` (see the module docstring)."""
    end = data.find(b"\n")
    fields = data[:end].split(b" ") if end >= 0 else []
    if len(fields) != 4 or fields[0] != MAGIC:
        raise Damaged("not a suggestion state journal")
    if fields[1] != str(VERSION).encode():
        raise Damaged(f"unsupported journal version {fields[1].decode(errors='replace')!r}")
    if hashlib.sha256(b" ".join(fields[:3])).hexdigest().encode() != fields[3]:
        raise Damaged("journal header checksum mismatch")
    if fields[2] != base.encode():
        return None
    bodies: list[bytes] = []
    position, last = end + 1, base
    while position < len(data):
        found = _record(data, position, last)
        if found is None:
            if b"\n" in data[position:]:
                later = ", later ones follow" if b"\n" in data[position:-1] else ""
                raise Damaged(f"journal record {len(bodies) + 1} is damaged{later}")
            break  # a torn append: that save did not complete
        body, last, position = found
        bodies.append(body)
    return Scan(bodies, position, last)


def _record(data: bytes, position: int, previous: str) -> tuple[bytes, str, int] | None:
    """The record at ``position`` if it is whole and its digest holds: its body, its digest
    and where the next begins."""
    space = data.find(b" ", position, position + 21)
    length = data[position:space]
    if space < 0 or not length.isdigit():
        return None
    start = space + 66
    end = start + int(length)
    digest = data[space + 1 : start - 1].decode("ascii", errors="replace")
    if data[start - 1 : start] != b" " or data[end : end + 1] != b"\n":
        return None
    body = data[start:end]
    if _digest(previous, body) != digest:
        return None
    return body, digest, end + 1
