"""The server's check that the controller's history is where its issued list starts, at the cost
of what was added since the last call.

Katib sends every assignment in every call, so checking the whole history each time costs what
the history holds: at 10,000 assignments, ten thousand comparisons of two dicts on each call
(the controller's are parsed copies of the server's, never the same objects). Between two calls
both lists only grow, and the embedded runtime's parsed Suggestions share the items of their
previous version (``app/embedded/models.py``), as the server's issued tuples share theirs. So
``Prefixes`` remembers the two lists it last found agreeing; when the new ones start with them
(one comparison of each at C speed, mostly of identities), only the items after them are
compared. Agreement is a function of the items' values, so the memo never changes an answer:
a list that differs from the remembered one is checked in full.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter

from katib_resume.adapters.local.suggestion.assignments import key_of
from katib_resume.core.history import History, starts_with
from katib_resume.core.model import Manifest

Check = Callable[[Sequence[Manifest], Sequence[Manifest]], bool]


class Prefixes:
    def __init__(self, check: Check) -> None:
        self.check = check
        """Whether the first list is where the second starts, comparing every item."""
        self._have: Sequence[Manifest] = ()
        self._issued: Sequence[Manifest] = ()

    def is_prefix(self, have: Sequence[Manifest], issued: Sequence[Manifest]) -> bool:
        """``check(have, issued)``, comparing only what follows the lists it last agreed on."""
        held = len(self._have)
        agreed = (
            0 < held <= len(have)
            and held <= len(issued)
            and starts_with(have, self._have)
            and starts_with(issued, self._issued)
        )
        start = held if agreed else 0
        if not self.check(have[start:], issued[start:]):
            return False
        self.agreed(have, issued)
        return True

    def agreed(self, have: Sequence[Manifest], issued: Sequence[Manifest]) -> None:
        """Remember ``have`` as where ``issued`` starts: what ``check`` found, or what a
        restore proved (``StateStore.proved``), so the next call compares what follows. A
        ``History`` (not decoded) is kept as it is, immutable, to be proved a prefix by
        identity (``History.extends``), not copied into a tuple (which decodes it)."""
        self._have = _kept(have)
        self._issued = _kept(issued[: len(have)])


def _kept(items: Sequence[Manifest]) -> Sequence[Manifest]:
    return items if isinstance(items, History) else tuple(items)


def holds(have: Sequence[Manifest], issued: Sequence[Manifest]) -> bool:
    """Whether ``have`` is where ``issued`` starts (the server's ``Check``). Katib sends every
    assignment in every call: the common case, every item equal to ours as a whole, is one
    comparison of the two lists in C (it skips an item that is ours itself); then, for items
    that hold other keys too (PBT's labels), their names and values compared in C; only a list
    that differs is compared by key, item by item."""
    if len(have) > len(issued):
        return False
    ours = list(issued[: len(have)])
    if list(have) == ours or _same_keys(have, ours):
        return True
    return all(
        mine == theirs or key_of(mine) == key_of(theirs)
        for mine, theirs in zip(have, issued, strict=False)
    )


def _same_keys(have: Sequence[Manifest], ours: list[Manifest]) -> bool:
    """Whether ``have``'s names and values are ``ours``' (well formed), compared in C: then
    every item has our item's key (``key_of``), whatever other keys it holds."""
    try:
        names, values = list(map(_NAME, have)), list(map(_VALUES, have))
    except (KeyError, TypeError):
        return False
    return names == list(map(_NAME, ours)) and values == list(map(_VALUES, ours))


_NAME, _VALUES = itemgetter("name"), itemgetter("parameterAssignments")
