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

``SPLIT`` declares the lists kept this way, as data: one path of two fields per kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from katib_resume.core.katib import API_VERSION
from katib_resume.core.kube import Manifest

Key = tuple[str, str, str, str]
SPLIT: dict[tuple[str, str], tuple[str, str]] = {
    (API_VERSION, "Suggestion"): ("status", "suggestions"),
}
"""(apiVersion, kind) -> the path of the list kept as side rows."""


def long_list(key: Key, obj: Manifest) -> list[Any] | None:
    """The object's list kept as side rows (``None``: its kind has none, or it is no list)."""
    path = SPLIT.get(key[:2])
    if path is None:
        return None
    parent = obj.get(path[0])
    value = parent.get(path[1]) if type(parent) is dict else None
    return value if type(value) is list else None


def without_list(key: Key, obj: Manifest) -> Manifest:
    """``obj`` with its long list left out (a shallow copy: ``obj`` is not changed)."""
    first, second = SPLIT[key[:2]]
    return {**obj, first: {**obj[first], second: None}}


def with_list(key: Key, obj: Manifest, items: list[Any]) -> Manifest:
    """``obj`` (just decoded, owned by the caller) with its long list put back in place."""
    first, second = SPLIT[key[:2]]
    obj[first][second] = items
    return obj


def continues(items: Sequence[Any], previous: Sequence[Any] | None, held: int) -> bool:
    """Whether ``items`` extends ``previous``, the list of the chain's ``held`` items."""
    if previous is None or len(previous) != held or len(items) < held:
        return False
    return held == 0 or items[:held] == previous  # shared items compare by identity first
