"""A list whose entries read back from disk are decoded when something first reads them.

The Kubernetes Events of a state directory are appended by every command and read by few (``get
events``, ``describe``, a demo's report): a 5,000-trial state holds 20,000 of them, and decoding
them all on every open made a one-field ``edit`` and every restart cost what the history holds.
``Deferred`` keeps the stored entries as they came (their number is known at once, which is
all a run's progress check reads) and turns them into values on the first read of any entry;
what is appended in this process is kept as it is. Read, it is the list it stands for: it
compares equal to any sequence of the same values. ``where`` reads part of it: when the stored
entries can be looked up by a key (``Indexed``: the store's index of the object each Event is
about), only those the key names are turned into values, so ``describe`` decodes one object's
Events, not the history's; ``placed_where`` reads the entries about objects of some names, with
their places in the list (``get events NAME`` names an Event by its place).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar, overload, runtime_checkable

T = TypeVar("T")


@runtime_checkable
class Indexed(Protocol):
    """Stored entries that can say which of them a key names, in their order, without reading
    the others; it may name more than the key matches (never fewer): ``where`` matches them."""

    def about(self, key: Any) -> Sequence[Any]: ...


@runtime_checkable
class Named(Protocol):
    """Stored entries that can say which of them may be about an object named one of some
    names, with the place of each (1 for the first), or ``None`` when they cannot."""

    def named(self, names: Collection[str]) -> tuple[list[int], Sequence[Any]] | None: ...


class Deferred(Sequence[T], Generic[T]):
    def __init__(self) -> None:
        self._stored: Sequence[Any] = ()
        self._read: Callable[[Sequence[Any]], list[T]] | None = None
        self._values: list[T] = []

    def defer(self, stored: Sequence[Any], read: Callable[[Sequence[Any]], list[T]]) -> None:
        """Put ``stored`` before what is held; ``read(stored)`` gives its values, when first
        needed (so a damaged entry fails the read that needs it, as ``read`` reports it)."""
        self._values[:0] = self._decoded()
        self._stored, self._read = stored, read

    def append(self, value: T) -> None:
        self._values.append(value)

    def extend(self, values: Iterable[T]) -> None:
        self._values.extend(values)

    def __len__(self) -> int:
        return len(self._stored) + len(self._values)

    def where(self, key: Any, matches: Callable[[T], bool]) -> list[T]:
        """The values ``matches`` keeps, in order: those stored and not read yet looked up by
        ``key`` when they are ``Indexed`` (only the entries it names are turned into values,
        and held to ``matches`` as the others would be), every value matched otherwise."""
        stored, read = self._stored, self._read
        if not stored or read is None or not isinstance(stored, Indexed):
            return [value for value in self._all() if matches(value)]
        found = read(stored.about(key))
        return [value for value in (*found, *self._values) if matches(value)]

    def placed_where(
        self, names: Collection[str], matches: Callable[[T], bool]
    ) -> list[tuple[int, T]]:
        """The values ``matches`` keeps, each with its place (1 for the first), in order: those
        stored and not read yet looked up by ``names`` when they are ``Named`` and can say
        (only the entries the look-up names are turned into values, held to ``matches`` as the
        others would be), every value matched otherwise."""
        stored, read = self._stored, self._read
        found = stored.named(names) if read is not None and isinstance(stored, Named) else None
        if read is None or found is None:
            return [(at, value) for at, value in enumerate(self._all(), 1) if matches(value)]
        places, entries = found
        values = read(entries)
        pairs = [*zip(places, values, strict=True), *enumerate(self._values, len(stored) + 1)]
        return [(at, value) for at, value in pairs if matches(value)]

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        return self._all()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return self._all() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return repr(self._all())

    def _all(self) -> list[T]:
        if self._stored:
            self._values[:0] = self._decoded()
            self._stored, self._read = (), None
        return self._values

    def _decoded(self) -> list[T]:
        read = self._read
        return [] if read is None else read(self._stored)
