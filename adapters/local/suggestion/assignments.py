"""Trial assignments as Katib's controller stores them, and their names.

An assignment is ``{name, parameterAssignments: [{name, value}]}`` (the controller may add
``labels`` or ``earlyStoppingRules``; we ignore them when comparing). Two assignments are the same
when their ``key`` is: the name and the values in order.

Names are ``<experiment>-<8 lowercase alphanumerics>`` like Katib's, but derived from a SHA-256
of ``(seed, index)`` rather than drawn at random, so a rebuilt server gives the ``k``-th
assignment the same name as the server it replaces. Eight base-36 characters can still collide,
so a name already taken is re-derived with an attempt counter; because ``taken`` is the set of
names issued before, the choice is itself deterministic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import eq, itemgetter
from typing import Any

from katib_resume.adapters.local.suggestion.known import Known, Names
from katib_resume.adapters.local.suggestion.points import Points
from katib_resume.adapters.local.suggestion.space import Point
from katib_resume.core.manifest import Manifest

ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
SUFFIX_LENGTH = 8

Key = tuple[str, Point]


def name_for(experiment: str, seed: int, index: int, taken: Container[str]) -> str:
    """The ``index``-th assignment's name: deterministic, and not one of ``taken``."""
    attempt = 0
    while True:
        digest = hashlib.sha256(f"{seed}:{index}:{attempt}".encode()).digest()
        number = int.from_bytes(digest[:8], "big")
        suffix = "".join(ALPHABET[(number // 36**i) % 36] for i in range(SUFFIX_LENGTH))
        name = f"{experiment}-{suffix}"
        if name not in taken:
            return name
        attempt += 1


def assignment(name: str, point: Point) -> Manifest:
    """The assignment as the service returns it (and as ``status.suggestions`` stores it)."""
    values = [{"name": parameter, "value": value} for parameter, value in point]
    return {"name": name, "parameterAssignments": values}


def point_of(manifest: Manifest) -> Point:
    """The values of an assignment, read leniently: a history is data we did not write."""
    values = manifest.get("parameterAssignments") or []
    return tuple(
        (str(v.get("name", "")), str(v.get("value", ""))) for v in values if isinstance(v, dict)
    )


def key_of(manifest: Manifest) -> Key:
    return str(manifest.get("name", "")), point_of(manifest)


def normalized(manifests: Iterable[Manifest]) -> tuple[Manifest, ...]:
    """The assignments reduced to what the service itself returns (a copy we may keep)."""
    return tuple(assignment(*key_of(m)) for m in manifests)


@dataclass(slots=True)
class Index:
    """The names and points of ``issued`` (a state's tuple, by identity), kept up to date by
    the server as assignments are added, so that a call does not re-read every assignment."""

    issued: tuple[Manifest, ...]
    names: Names
    points: Points

    @classmethod
    def of(cls, issued: tuple[Manifest, ...]) -> Index:
        """The index of a state's ``issued``, whose items all have ``assignment``'s shape
        (they were made by it or checked by ``all_well_formed``), its names and its points
        read when asked for (``known.Names``, ``points.py``)."""
        return cls(issued, Names(issued), Points(issued))

    def known(self, results: Mapping[str, float | None]) -> Known:
        """``results`` (by Trial name) by assignment index, those of Trials not ours left out:
        Katib sends every result in every call, and ``Known`` maps only what is read."""
        return Known(self.issued, self.names, results)


def well_formed(item: Any) -> bool:
    """Whether ``item`` has exactly the shape ``assignment`` produces (for loading state)."""
    if not isinstance(item, dict) or item.keys() != _ITEM_KEYS:
        return False
    values = item["parameterAssignments"]
    return (
        isinstance(item["name"], str)
        and isinstance(values, list)
        and all(
            isinstance(v, dict)
            and v.keys() == _VALUE_KEYS
            and isinstance(v["name"], str)
            and isinstance(v["value"], str)
            for v in values
        )
    )


def all_well_formed(items: Sequence[Any]) -> bool:
    """Whether every item is ``well_formed``, checked kind by kind over all of them at once
    (C-level passes: a restart reads thousands of assignments)."""
    if not _all(items, dict) or not all(map(eq, map(dict.keys, items), repeat(_ITEM_KEYS))):
        return False
    lists = list(map(_VALUES, items))
    if not _all(map(_NAME, items), str) or not _all(lists, list):
        return False
    values = list(chain.from_iterable(lists))
    if not _all(values, dict) or not all(map(eq, map(dict.keys, values), repeat(_VALUE_KEYS))):
        return False
    return _all(chain.from_iterable(map(_PAIR, values)), str)


def _all(items: Iterable[Any], kind: type) -> bool:
    """Whether every item is exactly of type ``kind`` (as the JSON parser makes them)."""
    return set(map(type, items)) <= {kind}


_ITEM_KEYS = frozenset(("name", "parameterAssignments"))
_VALUE_KEYS = frozenset(("name", "value"))
_NAME = itemgetter("name")
_VALUES = itemgetter("parameterAssignments")
_PAIR = itemgetter("name", "value")
