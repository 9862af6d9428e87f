"""The points of the issued assignments, read when asked for, and the set of them, kept as bytes.

A search's ``draw`` takes the points issued so far (``Point``: the names and values of one
assignment). Reading every assignment's point after a restart (a tuple of tuples each: 1.8 ms
at 5,000) is work most searches never use: the random search reads none, hyperband and PBT the
few of one rung or pool, CMA-ES and Sobol those of the trials their sampler reads
(``sampler_reads``). ``Points`` reads one from its assignment when it is asked for, and all
of them (once, then kept) only for a search that iterates them.

What every Optuna search and the grid do read of all of them is whether a new point was issued
before (a search never repeats a point: ``optuna_search``, ``algorithms.GridSearch``), and a
set of every point costs as much again. ``Seen`` answers it from the canonical bytes of the
assignments a restart read (``encoded.kept``, the file's own bytes: ``unparsed.py``): the
point's values written as its assignment writes them, ``"parameterAssignments":[...]}``, are in
those bytes exactly when an assignment has those values (a quote inside a string is escaped, so
a key's closing quote, followed by a colon, stands only where a key ends; the closing brace
ends the list). The snapshot's marks answer for the assignments they cover by a bisection, and
the bytes after them are searched at C speed (``marks.point_in``; all of them, 0.1 ms at 5,000,
for a snapshot without marks), as many times as a search asks; the set
is built for the rest of the live study's life once it has been asked ``FINDS`` times, or its
size is needed (a finite space nearly used up), or no bytes are kept (a state rebuilt, or saved
since by a journal record). ``Points.seen`` keeps its set, and a set built moves with the points
to their extension (``Points.extended``: the next call's points), so a server that serves the
grid or a finite random space builds it once, not at every call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Set
from itertools import repeat
from operator import itemgetter
from typing import Any, overload

from katib_resume.adapters.local.suggestion import encoded
from katib_resume.adapters.local.suggestion.marks import Marks, point_in
from katib_resume.adapters.local.suggestion.space import Point
from katib_resume.core.manifest import Manifest

FINDS = 8
"""Searches of the bytes before the set is built (each is a pass over them)."""
_VALUES = itemgetter("parameterAssignments")
_PAIR = itemgetter("name", "value")


class Points(Sequence[Point]):
    """The points of ``items`` (assignments of ``assignment``'s shape), in order."""

    __slots__ = ("_items", "_read", "_seen")

    def __init__(self, items: tuple[Manifest, ...], read: list[Point] | None = None) -> None:
        self._items, self._read = items, read
        self._seen: Seen | None = None  # the last ``seen()``, while it is these points' set

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Point: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Point]: ...
    def __getitem__(self, index: int | slice) -> Point | Sequence[Point]:
        if self._read is not None:
            return self._read[index]
        if isinstance(index, slice):
            return _points(self._items[index])
        return _point(self._items[index])

    def __iter__(self) -> Iterator[Point]:
        return iter(self.read())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self.read() == list(other)

    __hash__ = None  # type: ignore[assignment]  # a sequence that compares by value

    def read(self) -> list[Point]:
        """Every point (read once, then kept)."""
        if self._read is None:
            self._read = _points(self._items)
        return self._read

    def extended(self, items: tuple[Manifest, ...], new: Iterable[Point]) -> Points:
        """The points of ``items``, which are these items and then those of ``new``. A set of
        these points already built (``seen``) moves to them, ``new`` added: the next call's
        searches ask it without building it again (these points then build their own)."""
        added = list(new)
        extended = Points(items, None if self._read is None else [*self._read, *added])
        seen, self._seen = self._seen, None
        if seen is not None and seen.built:
            seen.moved(extended, added)
            extended._seen = seen
        return extended

    def seen(self) -> Seen:
        """The set of these points (``Seen``): the same object until ``extended``, so what a
        search adds to it (its new points) is kept with them."""
        if self._seen is None:
            kept = encoded.kept(self._items)
            self._seen = Seen(self, None) if kept is None else Seen(self, kept.body, kept.marks)
        return self._seen


class Seen(Set[Point]):
    """The points issued, as a set (see the module docstring): those of ``points``, whose
    canonical bytes are ``body`` (``None``: not known), and those added."""

    def __init__(
        self, points: Sequence[Point], body: bytes | None, marked: Marks | None = None
    ) -> None:
        self._points, self._body, self._marks = points, body, marked
        self._added: set[Point] = set()
        self._set: set[Point] | None = None
        self._finds = 0

    def __contains__(self, point: object) -> bool:
        if self._set is None and self._body is not None and self._finds < FINDS:
            self._finds += 1
            if point in self._added:
                return True
            return isinstance(point, tuple) and point_in(self._body, self._marks, _written(point))
        return point in self._whole()

    def add(self, point: Point) -> None:
        (self._added if self._set is None else self._set).add(point)

    def __len__(self) -> int:
        return len(self._whole())

    def __iter__(self) -> Iterator[Point]:
        return iter(self._whole())

    @property
    def built(self) -> bool:
        """Whether the set is built (no more searches of the bytes)."""
        return self._set is not None

    def moved(self, points: Sequence[Point], new: Iterable[Point]) -> None:
        """Now the set of ``points``, which are the points before and ``new`` (once built)."""
        assert self._set is not None, "only a built set moves"
        self._points = points
        self._set.update(new)

    def _whole(self) -> set[Point]:
        if self._set is None:
            self._set = {*self._points, *self._added}
        return self._set


def seen_of(points: Sequence[Point]) -> Seen | set[Point]:
    """The set of ``points``: a ``Seen`` of ``Points``, else a set."""
    return points.seen() if isinstance(points, Points) else set(points)


def _written(point: Point) -> bytes:
    """How an assignment of ``point``'s values writes them (``assignments.assignment``)."""
    values = [{"name": name, "value": value} for name, value in point]
    return b'"parameterAssignments":' + encoded.canonical(values) + b"}"


def _point(item: Manifest) -> Point:
    return tuple(map(_PAIR, _VALUES(item)))


def _points(items: Sequence[Manifest]) -> list[Point]:
    """The points of ``items``, without a Python pass per item (a restart reads thousands)."""
    values: Any = map(_VALUES, items)
    return list(map(tuple, map(map, repeat(_PAIR), values)))
