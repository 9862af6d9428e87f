"""Lists stored as the splices that made them, so that a write stores what it changed.

The Experiment's status names every Trial by phase (``succeededTrialList`` and the others,
Katib's API): sorted, so a Trial that finishes lands anywhere in a list that holds most of the
history, and the status is written about once per trial. Stored whole, each write would cost
what the history holds (300 KB at 10,000 trials). These lists are not append-only, so the
Suggestion's way (``items.py``: a chain of items, a revision holding a prefix of it) does not
fit them as they are; what *is* append-only is the sequence of edits. So a chain's items are
splices: ``[key, start, deleted, inserted]`` replaces ``deleted`` entries from ``start`` of the
list ``key`` by ``inserted``, and ``[key, None]`` says ``key`` holds no list (absent, or not a
list); a revision holding ``n`` items is the lists those first ``n`` splices make from nothing.

A write finds its splice per list from the common start and end of the list before and after
(``splice``: binary searches comparing slices at C speed, mostly by identity, as the lists share
their names): one finished Trial is one short splice. A chain that holds ``REBASE`` splices is
not continued: the next write starts a new chain with one splice per list from nothing, so that
reading a revision replays a bounded number of splices (``replay``), at the cost of one whole
copy every ``REBASE`` writes. Entries compare by ``==``, as in the store's ``as_json_over``: an
entry replaced by an equal one of another JSON type (``1`` by ``1.0``) keeps the stored one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

REBASE = 64
"""Splices a chain holds before the next write starts a new one."""

Lists = dict[str, list[Any] | None]


def lists_of(parent: Mapping[str, Any], keys: Sequence[str]) -> Lists:
    """The lists at ``keys`` of ``parent`` (``None`` where there is none)."""
    found: Lists = {}
    for key in keys:
        value = parent.get(key)
        found[key] = value if type(value) is list else None
    return found


def splices(before: Lists, after: Lists) -> list[list[Any]]:
    """The splices that turn the lists ``before`` into ``after`` (none where a list is equal)."""
    made: list[list[Any]] = []
    for key, new in after.items():
        old = before.get(key)
        if new is None:
            if old is not None:
                made.append([key, None])
        elif old is None:
            made.append([key, 0, 0, list(new)])
        elif new != old:
            made.append([key, *splice(old, new)])
    return made


def splice(old: Sequence[Any], new: Sequence[Any]) -> tuple[int, int, list[Any]]:
    """(start, deleted, inserted) with ``old[start:start + deleted] = inserted`` giving ``new``:
    the part between their common start and their common end."""
    start = _common(old, new, 0, min(len(old), len(new)), forward=True)
    room = min(len(old), len(new)) - start
    end = _common(old, new, 0, room, forward=False)
    return start, len(old) - start - end, list(new[start : len(new) - end])


def _common(a: Sequence[Any], b: Sequence[Any], lo: int, hi: int, *, forward: bool) -> int:
    """The length of the longest common start (``forward``) or end of ``a`` and ``b``, at most
    ``hi``: a binary search that compares only the part not yet known to be common."""
    if _same(a, b, lo, hi, forward):
        return hi
    hi -= 1
    while lo < hi:  # a and b share ``lo`` entries and do not share ``hi + 1``
        mid = (lo + hi + 1) // 2
        if _same(a, b, lo, mid, forward):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _same(a: Sequence[Any], b: Sequence[Any], lo: int, hi: int, forward: bool) -> bool:
    """Whether entries ``lo`` to ``hi`` from the start (or the end) of ``a`` and ``b`` agree."""
    if forward:
        return a[lo:hi] == b[lo:hi]
    return a[len(a) - hi : len(a) - lo] == b[len(b) - hi : len(b) - lo]


def replay(made: Sequence[Sequence[Any]]) -> Lists:
    """The lists the splices ``made`` make from nothing."""
    lists: Lists = {}
    for item in made:
        key = item[0]
        if item[1] is None:
            lists[key] = None
            continue
        start, deleted, inserted = item[1], item[2], item[3]
        current = lists.get(key)
        if current is None:
            current = lists[key] = []
        current[start : start + deleted] = inserted
    return lists
