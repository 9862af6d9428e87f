"""The checksums of the suggestion state's snapshot, by file version (``state.py``).

Version 3 to 7 files carry the XXH3 128-bit digest of their payload (``xxh3_128``, from
``xxhash``), version 2 files its SHA-256 (``sha256``). Every restart hashes every byte of the
snapshot, and the checksum is there to find damage (a torn or flipped byte, an edit by hand),
not to stand against someone who can write the volume (who could write a good digest as well):
XXH3 hashes the state of 5,000 assignments in about 0.03 ms, where SHA-256 took 0.4, a tenth of
a restart. All are read; only the current version is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import xxhash


@dataclass(frozen=True, slots=True)
class Checksum:
    """How a version's file names its payload's digest (``key``) and computes it: in hex,
    ``size`` digits."""

    key: str
    size: int
    digest: Callable[[bytes | memoryview], str]


def _sha256(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()


def _xxh3_128(data: bytes | memoryview) -> str:
    return xxhash.xxh3_128_hexdigest(data)


CHECKSUMS = {
    7: Checksum("xxh3_128", 32, _xxh3_128),
    6: Checksum("xxh3_128", 32, _xxh3_128),
    5: Checksum("xxh3_128", 32, _xxh3_128),
    4: Checksum("xxh3_128", 32, _xxh3_128),
    3: Checksum("xxh3_128", 32, _xxh3_128),
    2: Checksum("sha256", 64, _sha256),
}
"""The versions read, by number, newest first (``state.VERSION`` is the one written)."""
