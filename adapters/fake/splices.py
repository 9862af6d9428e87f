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

A write finds, per list, the stretches where the list before and after differ (``hunks``): runs
in common found by galloping comparisons of slices at C speed (mostly by identity, as the lists
share their names), and at each difference the nearest place, within ``REACH`` entries, where
the two agree again. Each stretch is one splice, the last first, so that each one's start is
a place in the list before the write: a batch of Trials finishing is one short splice per name,
wherever the names land in the sorted list (one splice from the first change to the last would
hold a third of the list for two names, on average, and a chain of them, decoded when a state is
opened, many times the list). A list changed at more than ``HUNKS`` places keeps what follows as
one splice from its common start and end (``splice``), so that a write of a list rewritten
anywhere costs a bounded number of steps. A chain is not continued by a write that would make
it hold more than ``REBASE`` splices: that write starts a new chain with one splice per list from
nothing, so that reading a revision replays at most ``REBASE`` splices (``replay``), each in
place, at the cost of one whole copy of the lists every ``REBASE`` splices. Entries compare by
``==``, as in the store's ``as_json_over``: an entry replaced by an equal one of another JSON
type (``1`` by ``1.0``) keeps the stored one. Several splices of one list in one write are
splices of the same form, so a build that stored one per list reads these chains, and this one
reads its chains: the store's format is the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

REBASE = 64
"""The most splices a chain holds: a write that would make it hold more starts a new one."""
REACH = 32
"""How far past a difference ``hunks`` looks for the place where the lists agree again: the
longest run of entries added or removed in one place that it finds as such. A longer one is
taken for entries replaced, one difference each, until ``HUNKS`` of them end the search: a
longer splice, as correct (the names of a batch of Trials land apart in a sorted list)."""
HUNKS = 16
"""Differences ``hunks`` finds one by one in a list; what follows is one splice."""

Lists = dict[str, list[Any] | None]


def lists_of(parent: Mapping[str, Any], keys: Sequence[str]) -> Lists:
    """The lists at ``keys`` of ``parent`` (``None`` where there is none)."""
    found: Lists = {}
    for key in keys:
        value = parent.get(key)
        found[key] = value if type(value) is list else None
    return found


def splices(before: Lists, after: Lists) -> list[list[Any]]:
    """The splices that turn the lists ``before`` into ``after`` (none where a list is equal):
    per list, one per stretch that differs (``hunks``), the last first."""
    made: list[list[Any]] = []
    for key, new in after.items():
        old = before.get(key)
        if new is None:
            if old is not None:
                made.append([key, None])
        elif old is None:
            made.append([key, 0, 0, list(new)])
        elif new != old:
            made.extend([key, *hunk] for hunk in reversed(hunks(old, new)))
    return made


def hunks(old: Sequence[Any], new: Sequence[Any]) -> list[tuple[int, int, list[Any]]]:
    """The stretches where ``old`` and ``new`` differ, first to last: (start, deleted,
    inserted), ``start`` a place in ``old``, none touching the next; ``old`` with each stretch
    replaced gives ``new``. Between them, runs in common (``_run``); at a difference, the
    nearer of the next entry of ``old`` within ``REACH`` entries of ``new`` (entries added) and
    the next of ``new`` within ``REACH`` of ``old`` (entries removed), else one entry replaced.
    After ``HUNKS`` differences, the rest is one stretch (``splice``)."""
    found: list[tuple[int, int, list[Any]]] = []
    i = j = 0
    steps = 0
    while True:
        run = _run(old, new, i, j)
        i, j = i + run, j + run
        if i == len(old) or j == len(new) or steps == HUNKS:
            if i < len(old) or j < len(new):
                start, deleted, inserted = splice(old[i:], new[j:])
                _add(found, i + start, deleted, inserted)
            return found
        steps += 1
        added = _place(new, old[i], j + 1, j + 1 + REACH)
        removed = _place(old, new[j], i + 1, i + 1 + REACH)
        if added is not None and (removed is None or added - j <= removed - i):
            _add(found, i, 0, list(new[j:added]))
            j = added
        elif removed is not None:
            _add(found, i, removed - i, [])
            i = removed
        else:
            _add(found, i, 1, [new[j]])
            i, j = i + 1, j + 1


def _add(
    found: list[tuple[int, int, list[Any]]], start: int, deleted: int, inserted: list[Any]
) -> None:
    """``found`` with the stretch (start, deleted, inserted), joined to the last if it ends
    where this one starts."""
    if found and found[-1][0] + found[-1][1] == start:
        last = found.pop()
        start, deleted, inserted = last[0], last[1] + deleted, last[2] + inserted
    found.append((start, deleted, inserted))


def _place(entries: Sequence[Any], entry: Any, lo: int, hi: int) -> int | None:
    """The first place of ``entry`` in ``entries[lo:hi]`` (by ``==``, at C speed), if any."""
    try:
        return entries.index(entry, lo, hi)
    except ValueError:
        return None


def _run(old: Sequence[Any], new: Sequence[Any], i: int, j: int) -> int:
    """The length of the longest common start of ``old[i:]`` and ``new[j:]``: slices of 1, 2,
    4... entries compared in turn until one differs, then a binary search inside that one, so
    a run of ``n`` costs about ``3 n`` comparisons at C speed and ``2 log n`` steps."""
    most = min(len(old) - i, len(new) - j)
    done, size = 0, 1
    while done < most:
        size = min(size, most - done)
        if old[i + done : i + done + size] != new[j + done : j + done + size]:
            lo, hi = done, done + size - 1  # the first difference is at lo..hi
            while lo < hi:
                mid = (lo + hi) // 2
                if old[i + lo : i + mid + 1] == new[j + lo : j + mid + 1]:
                    lo = mid + 1
                else:
                    hi = mid
            return lo
        done += size
        size *= 2
    return most


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
