"""Each assignment's trial number in a live study, without a list of as many integers.

A rebuilt study gives assignment ``i`` the trial number ``i`` whenever every assignment is a
point of the space, which is the rule (``OptunaSearch._built``): a list of those numbers was one
integer object per assignment made at every restart (5,000 of them, and at a restart's cold
start, the fresh memory they take: about a third of a millisecond of the rebuild). ``Numbers``
holds them as their count, and the numbers added later (the new assignments', and a history's
whose assignments are not all trials) as a list.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from operator import countOf
from typing import overload


class Numbers(Sequence[int | None]):
    """The first ``own`` assignments' numbers are their indexes, the others' ``more``
    (``None``: not a trial), in order; ``append`` adds one."""

    __slots__ = ("_more", "_own")

    def __init__(self, own: int = 0, more: Iterable[int | None] = ()) -> None:
        self._own, self._more = own, list(more)

    def __len__(self) -> int:
        return self._own + len(self._more)

    @overload
    def __getitem__(self, index: int) -> int | None: ...
    @overload
    def __getitem__(self, index: slice) -> list[int | None]: ...
    def __getitem__(self, index: int | slice) -> int | list[int | None] | None:
        if isinstance(index, slice):
            return list(self)[index]
        at = index + len(self) if index < 0 else index
        if 0 <= at < self._own:
            return at
        if at < 0:
            raise IndexError("trial number index out of range")
        return self._more[at - self._own]

    def __iter__(self) -> Iterator[int | None]:
        return chain(range(self._own), self._more)

    def __eq__(self, other: object) -> bool:
        """Equal to a sequence of the same numbers (a list, a tuple), never to a string."""
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return False
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # a sequence that compares by value

    def append(self, number: int | None) -> None:
        self._more.append(number)

    def count(self, value: object) -> int:
        """How many are ``value`` (``count(None)``: the assignments that are no trial)."""
        mine = range(self._own)
        own = mine.count(value) if isinstance(value, int) else countOf(mine, value)  # (at once)
        return own + countOf(self._more, value)
