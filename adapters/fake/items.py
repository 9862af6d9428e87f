"""The long list of an object kept as side rows, so that a write stores what it appended.

Katib's API keeps every assignment a Suggestion ever made in ``status.suggestions``, so the
Suggestion of a 10,000-trial Experiment is about 1.5 MB of JSON, and it is written once or twice
per trial: stored whole, each write would cost what the history holds. The list is append-only
in practice (the controller only ever adds assignments at its end), so ``sqlite.py`` stores it
beside the object's row: the row holds the object with the list left out, and says which
``chain`` of items holds the list and how many of them (``items``); each item is one row of the
``items`` table, written once. A revision whose list extends the previous revision's continues
its chain and writes only the new items; any other list (shorter, changed in the middle, the
first one) starts a new chain, named by the revision that starts it. Items are never changed,
so every revision still in the log reads back exactly the list it was written with, whatever
came after it; a chain's items go when the last row naming it goes.

A writer's open holds such a list undecoded (``chained.py``: the chain's texts, with the items
appended since), and a write of one that extends the stored one is recognised by identity
(``continues``): its new items alone are encoded, none of the held ones decoded.

``SPLIT`` declares the lists kept this way, as data: one path of two fields per kind.
``SPLICED`` declares lists kept as the chain of their edits instead (``splices.py``: the
Experiment's trial-name lists, sorted, so not append-only); ``side_rows`` and ``with_list`` say
for either what a write appends and how a revision reads back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from katib_resume.adapters.fake.chained import Chained
from katib_resume.adapters.fake.splices import REBASE, lists_of, replay, splices
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.trial_phases import TRIAL_LIST_KEYS

Key = tuple[str, str, str, str]
SPLIT: dict[tuple[str, str], tuple[str, str]] = {
    (API_VERSION, "Suggestion"): ("status", "suggestions"),
}
"""(apiVersion, kind) -> the path of the list kept as side rows."""
SPLICED: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    (API_VERSION, "Experiment"): ("status", TRIAL_LIST_KEYS),
}
"""(apiVersion, kind) -> the parent field and the fields of the lists kept as splices."""


def side_rows(
    key: Key, obj: Manifest, before: Manifest | None, held: int
) -> tuple[bool, list[Any], int] | None:
    """What a write of ``obj`` (replacing ``before``, whose chain holds ``held`` items; -1: it
    has none) keeps as side rows: whether it starts a new chain, the items it appends, and how
    many the chain then holds. ``None``: ``obj`` has no such list (a row of its own)."""
    spliced = SPLICED.get(key[:2])
    if spliced is None:
        items = long_list(key, obj)
        if items is None:
            return None
        previous = None if before is None else long_list(key, before)
        if continues(items, previous, held):
            return False, list(items[held:]), len(items)
        return True, list(items), len(items)
    parent, fields = spliced
    lists = _lists(obj, parent, fields)
    if lists is None or all(value is None for value in lists.values()):
        return None
    old = None if before is None or held < 0 else _lists(before, parent, fields)
    made = None if old is None else splices(old, lists)
    # a new chain, each list from nothing, only if this write's splices would overfill it (a
    # write that changes no list, such as an ``edit``'s, adds nothing, however full it is)
    if made is None or held + len(made) > REBASE:
        made = splices({}, lists)
        return True, made, len(made)
    return False, made, held + len(made)


def _lists(obj: Manifest, parent: str, fields: Sequence[str]) -> dict[str, Any] | None:
    value = obj.get(parent)
    return lists_of(value, fields) if type(value) is dict else None


def long_list(key: Key, obj: Manifest) -> Sequence[Any] | None:
    """The object's list kept as side rows (``None``: its kind has none, or it is no list):
    a ``list``, or a ``Chained`` (not decoded)."""
    path = SPLIT.get(key[:2])
    if path is None:
        return None
    parent = obj.get(path[0])
    value = parent.get(path[1]) if type(parent) is dict else None
    return value if type(value) is list or type(value) is Chained else None


def without_list(key: Key, obj: Manifest) -> Manifest:
    """``obj`` with its long list(s) left out (a shallow copy: ``obj`` is not changed)."""
    spliced = SPLICED.get(key[:2])
    if spliced is not None:
        parent, fields = spliced
        inner = obj[parent]
        gone = {field: None for field in fields if type(inner.get(field)) is list}
        return {**obj, parent: {**inner, **gone}}
    first, second = SPLIT[key[:2]]
    return {**obj, first: {**obj[first], second: None}}


def with_list(key: Key, obj: Manifest, items: Sequence[Any]) -> Manifest:
    """``obj`` (just decoded, owned by the caller) with its long list(s) put back in place
    from the chain's first items (for ``SPLICED`` lists: the lists those splices make)."""
    spliced = SPLICED.get(key[:2])
    if spliced is not None:
        inner = obj[spliced[0]]
        for field, value in replay(items).items():
            if value is not None:
                inner[field] = value
        return obj
    first, second = SPLIT[key[:2]]
    obj[first][second] = items
    return obj


def continues(items: Sequence[Any], previous: Sequence[Any] | None, held: int) -> bool:
    """Whether ``items`` extends ``previous``, the list of the chain's ``held`` items: proved
    by identity where both are ``Chained`` over the same texts (``Chained.extends``), else
    compared (shared items by identity first; a ``Chained`` decoded)."""
    if previous is None or len(previous) != held or len(items) < held:
        return False
    if type(items) is Chained and items.extends(previous):
        return True
    return held == 0 or items[:held] == previous
