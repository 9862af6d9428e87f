"""The journal beside the state snapshot: length-framed, checksummed records, appended.

``suggestion-state.journal`` is a header line and then one record per save since the snapshot::

    katib-resume/suggestion-journal 2 <snapshot's digest> <the line's xxh3_128>\n
    <length> <xxh3_128> <body>\n
    ...

The header names the format, its version, and the snapshot it continues: the digest of the
snapshot's payload, as the snapshot file holds it. A journal naming another snapshot is *stale*
(left behind by a compaction that replaced the snapshot) and holds nothing of value. A body is one
save's change (``state_store.py``: canonical JSON texts); its digest is the XXH3 128-bit digest
(``xxhash``, hex) of the previous record's digest (for the first, the snapshot's digest the
header names) followed by the body, so each record is checked alone and a record cannot be
moved, repeated or left out unnoticed. A body holds no raw line break (JSON escapes it in a
string): every record is exactly one line.

The digest finds damage, as the snapshot's does (``checksum.py``), not an adversary who can
write the volume. Version 1 journals, the same with SHA-256 (64 hex digits) in place of XXH3, are
read as they are; a save after reading one compacts (``state_store.py``), so a volume's journal
is upgraded by its next save. A restart checks every record: by C-level passes over all of them
(``_all_good``: the lines split, the lengths, then every digest from its predecessor's, one
``map``): SHA-256 over a few hundred records is most of that reading, XXH3 about a tenth of
it. Anything those passes do not accept is read record by record as below, which says what is
wrong.

A crash while a record is appended leaves a prefix of it at the end of the file: bytes after the
last good record with no line break in them (a record's line break is its last byte, written
last). That *torn* tail is dropped, as if that save never happened (the guarantee an atomic
rename gives: the old state or the new one). A bad record that ends in a line break is not what a
crash leaves, whether more lines follow it or not (a flipped line break can join two records
into one line that ends the file): the journal is ``Damaged``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from operator import add, methodcaller

import xxhash

MAGIC = b"katib-resume/suggestion-journal"
VERSION = 2
"""The version written; ``DIGESTS`` are the versions read."""
MAX_LENGTH = 20
"""Digits at most of a record's length."""


@dataclass(frozen=True, slots=True)
class Digest:
    """How a version digests a header line or a record (hex text, ``size`` digits)."""

    size: int
    of: Callable[[bytes], str]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


DIGESTS = {2: Digest(32, xxhash.xxh3_128_hexdigest), 1: Digest(64, _sha256)}
_VERSIONS = {str(version).encode(): version for version in DIGESTS}


class Damaged(ValueError):
    """The journal is not one this module writes, or a record inside it is damaged."""


@dataclass(frozen=True, slots=True)
class Scan:
    """A journal's good records: their bodies, where the last ends, its digest, and the
    journal's version (a save appends only to one of ``VERSION``)."""

    bodies: list[bytes]
    end: int
    last: str
    version: int = VERSION


def header(base: str) -> bytes:
    line = b"%s %d %s" % (MAGIC, VERSION, base.encode())
    return b"%s %s\n" % (line, DIGESTS[VERSION].of(line).encode())


def frame(body: bytes, previous: str) -> tuple[bytes, str]:
    """One record's line for ``body`` after the record (or header) of digest ``previous``,
    and its own digest."""
    digest = DIGESTS[VERSION].of(previous.encode() + body)
    return b"%d %s %s\n" % (len(body), digest.encode(), body), digest


def scan(data: bytes, base: str) -> Scan | None:
    """The good records of the journal ``data`` continuing the snapshot of digest ``base``;
    ``None`` if it continues another snapshot. Raises ``Damaged`` (see the module docstring)."""
    end = data.find(b"\n")
    fields = data[:end].split(b" ") if end >= 0 else []
    if len(fields) != 4 or fields[0] != MAGIC:
        raise Damaged("not a suggestion state journal")
    version = _VERSIONS.get(fields[1])
    if version is None:
        raise Damaged(f"unsupported journal version {fields[1].decode(errors='replace')!r}")
    digest = DIGESTS[version]
    if digest.of(b" ".join(fields[:3])).encode() != fields[3]:
        raise Damaged("journal header checksum mismatch")
    if fields[2] != base.encode():
        return None
    good = _all_good(data, end + 1, base, digest)
    if good is not None:
        return Scan(*good, version=version)
    bodies: list[bytes] = []
    position, last = end + 1, base
    while position < len(data):
        found = _record(data, position, last, digest)
        if found is None:
            if b"\n" in data[position:]:
                later = ", later ones follow" if b"\n" in data[position:-1] else ""
                raise Damaged(f"journal record {len(bodies) + 1} is damaged{later}")
            break  # a torn append: that save did not complete
        body, last, position = found
        bodies.append(body)
    return Scan(bodies, position, last, version)


def _all_good(
    data: bytes, start: int, base: str, digest: Digest
) -> tuple[list[bytes], int, str] | None:
    """The records from ``start`` (bodies, where the last ends, its digest) if every line is
    a good record, the last bytes after them a torn append or none, checked by C-level
    passes over all of them (one Python call per pass, not per record); ``None`` if one is
    not, or is a record ``_record`` reads otherwise (a body holding a line break), which the
    record-by-record reading then finds. A line ``<length> <digest> <body>`` splits into
    those three at its first two spaces exactly as ``_record`` reads it, its length all
    digits (no space) and its digest equal to the one computed (``size`` hex digits, no
    space): so where every line checks here, ``_record`` reads the same records, one a
    line."""
    lines = data[start:].split(b"\n")
    tail = lines.pop()  # b"" after a whole last record, else a torn append (no line break)
    if not lines:
        return [], len(data) - len(tail), base
    parts = list(map(_FIELDS, lines))
    if set(map(len, parts)) != {3}:
        return None
    lengths, digests, bodies = map(list, zip(*parts, strict=True))
    if not all(map(bytes.isdigit, lengths)) or max(map(len, lengths)) > MAX_LENGTH:
        return None
    if list(map(int, lengths)) != list(map(len, bodies)):
        return None
    previous = [base.encode(), *digests[:-1]]
    computed = list(map(str.encode, map(digest.of, map(add, previous, bodies))))
    if computed != digests:
        return None
    return bodies, len(data) - len(tail), digests[-1].decode()


_FIELDS = methodcaller("split", b" ", 2)


def _record(
    data: bytes, position: int, previous: str, digest: Digest
) -> tuple[bytes, str, int] | None:
    """The record at ``position`` if it is whole and its digest holds: its body, its digest
    and where the next begins."""
    space = data.find(b" ", position, position + MAX_LENGTH + 1)
    length = data[position:space]
    if space < 0 or not length.isdigit():
        return None
    start = space + digest.size + 2
    end = start + int(length)
    claimed = data[space + 1 : start - 1].decode("ascii", errors="replace")
    if data[start - 1 : start] != b" " or data[end : end + 1] != b"\n":
        return None
    body = data[start:end]
    if digest.of(previous.encode() + body) != claimed:
        return None
    return body, claimed, end + 1
