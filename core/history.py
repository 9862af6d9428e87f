"""A Suggestion's assignments as a store may hold them: read when read, extended without reading.

Katib keeps every assignment a Suggestion ever made in ``status.suggestions``, and a restart at
5,000 assignments spent more on that list (decoding its items, checking them, encoding them
again to compare) than on anything else, though it reads none of them but a few at the end: the
controller appends a batch, the suggestion service proves the list is where its saved state
starts. A store that keeps the items as their stored texts may hand the list over as a
``History`` instead of a ``list``: a sequence that decodes its items when something first reads
one, and answers the questions a restart asks of it without decoding them, each as the plain
list would (``extended``, ``extends``, ``names``, ``plain``, ``texts``), reordered without
decoding them (``reordered``), and which stored items it starts with (``stored``).

The core writes through it without knowing what holds it (``core.plan.suggestion`` appends a
batch with ``extended``, never iterating the items held), and reads it through ``Sequence``'s
methods, as the tuple of a model or the list of a stored object. ``History`` is an abstract
class rather than a protocol so that a reader can ask ``isinstance`` and take the generic path
otherwise; it is no ``list`` nor ``tuple`` subclass, on purpose: C code (``orjson``, ``json``,
``marshal``, ``pydantic-core``, a ``list``'s ``==``) reads a list's storage directly and would
see an empty one. Code that must encode one handles it explicitly, and anything else reads it
through its methods, which decode: a slower read, never a wrong one.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Sequence
from itertools import chain
from operator import methodcaller
from typing import Any, NamedTuple

Item = dict[str, Any]
_NAME_OF = methodcaller("get", "name")


class History(Sequence[Item]):
    """Assignments a store holds, decoded when read; see the module docstring. Implementations
    are immutable: every operation makes a new one, sharing what it can."""

    __slots__ = ()

    @abstractmethod
    def extended(self, fresh: Sequence[Item]) -> History:
        """This history with ``fresh`` appended (a new one; the items held are not read)."""

    @abstractmethod
    def extends(self, other: Sequence[Item]) -> bool:
        """Whether ``other`` is provably where this history starts, without reading an item
        (the same stored items, by identity). ``False`` means not proved: compare them."""

    def names(self, start: int = 0) -> list[str]:
        """``str(item.get("name"))`` of each item from ``start`` on, in order (an
        implementation may read them from its stored texts without decoding the items)."""
        return _names(self[start:])

    def plain(self, start: int = 0) -> bool:
        """Whether every item from ``start`` on is a plain JSON object (``plain``), answered
        without decoding where the stored texts say it (a JSON object's keys are strings)."""
        return plain(self[start:])

    def texts(self) -> Sequence[str] | None:
        """The items' stored JSON texts, one per item, in order, if every item is held as
        one; ``None`` otherwise."""
        return None

    def reordered(self, order: Sequence[int]) -> History | None:
        """This history's items in the order ``order`` gives them (``order[k]``: the index
        of the item put at ``k``, each index once), still undecoded, if it holds every item
        as a stored text; ``None`` otherwise (a caller then reorders the items it reads)."""
        return None

    def stored(self) -> Stored | None:
        """Which stored chain this history's first items are, if the store says: its first
        ``held`` items are the first ``held`` of the chain ``chain``. A store names a chain
        once and never changes an item of it, so whatever was proved of a chain's first items
        holds of every history that starts with them (``TrialLedger.vouched``)."""
        return None


class Stored(NamedTuple):
    """A stored chain's first items (``History.stored``)."""

    chain: int
    """The store's name of the chain (never reused)."""
    held: int
    """How many of its first items."""


def stored(items: Sequence[Any]) -> Stored | None:
    """``items.stored()`` of a ``History``; ``None`` for anything else."""
    return items.stored() if isinstance(items, History) else None


def names_of(items: Sequence[Any], start: int = 0) -> list[str]:
    """``str(item.get("name"))`` of each of ``items`` from ``start`` on, in order: a
    ``History``'s as it answers them (from its stored texts, none decoded), anything else's read
    from its items."""
    return items.names(start) if isinstance(items, History) else _names(items[start:])


def _names(items: Iterable[Any]) -> list[str]:
    return list(map(str, map(_NAME_OF, items)))


def starts_with(items: Sequence[Any], prefix: Sequence[Any], count: int | None = None) -> bool:
    """Whether ``items`` and ``prefix`` agree on their first ``count`` items (all of
    ``prefix``'s by default; at most that many): proved by a ``History`` that extends
    ``prefix``, without reading an item, else those items compared at C speed (mostly by
    identity, where versions share their items), a list and a tuple agreeing as sequences."""
    count = len(prefix) if count is None else count
    if len(items) < count:
        return False
    if isinstance(items, History) and items.extends(prefix):
        return True
    head, start = items[:count], prefix[:count]
    return head == start if type(head) is type(start) else tuple(head) == tuple(start)


class Unreadable(ValueError):
    """A ``History``'s stored item could not be decoded when read: the store's state is
    damaged, not whatever was reading it. A reader that takes a ``ValueError`` for bad input of
    its own (the suggestion service's saved state, say) lets this one pass."""


def plain(items: Iterable[Any]) -> bool:
    """Whether every item is a ``dict`` whose keys are ``str`` (exactly: a subclass, or a
    ``bytes`` key, a validator converts), as a JSON decoder makes a JSON object: two C-level
    passes, over the items' types and over their keys'."""
    items = items if isinstance(items, (list, tuple)) else list(items)
    return set(map(type, items)) <= _DICT and set(map(type, chain.from_iterable(items))) <= _STR


_DICT, _STR = frozenset((dict,)), frozenset((str,))
