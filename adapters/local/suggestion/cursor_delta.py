"""What changed in a search's cursor between two saves, as a small JSON value.

A journal record (``journal.py``) carries the cursor after its batch. Most cursors are small (an
integer for ``random``, ``grid`` and ``hyperband``), but some grow with the history: the
Optuna-backed searches keep every result told (``told``) and each trial's sampler attributes,
PBT every assignment's parent. Written whole into every record they would make the journal
quadratic again, so a record holds a *delta*, read back by ``apply``:

- ``{"value": X}``: the cursor is ``X`` (any cursor that is not a dict, or whose keys changed);
- ``{"keys": {key: change}}``: a dict cursor whose listed keys changed, each change one of
  ``{"value": X}`` (replaced), ``{"merge": {k: v}}`` (a dict whose entries ``k`` were set,
  the others unchanged, as ``{**old, **new}`` builds it: entries it gained, or any its maker
  ``noted``), ``{"extend": [...]}`` (a list that
  gained items at its end) or ``{"set": [[i, X], ...], "extend": [...]}`` (a list some of
  whose items were replaced, item ``i`` by ``X``, and that may have gained items: an Optuna
  search's column of results told before state format 7, whose entries a call set; written
  only when at most a quarter of the items changed, else the list is written whole). A
  ``column.Column`` (an Optuna search's results told, ``told_column``) changes as such a list
  does, its entries written as a cursor names them; written whole, it is packed
  (``column.packed``). Unlisted keys are unchanged.

``diff`` is generic: it knows no algorithm, so every search goes through it. It proves what it
leaves out: an entry is left out only if the new one is the very same object, or the same JSON
value (``same``: Python's ``==`` takes ``1``, ``1.0`` and ``True`` for one value, and ``0.0``
and ``-0.0``, JSON does not).
Those proofs are C-level passes over what is kept (object identity, a few nanoseconds an
entry), never an encoding of it; anything it cannot prove is written whole, which is larger but
never wrong. A list or dict its maker copied and changed at a few places says so (``noted``):
the identity pass would be a pass over the whole history at every call (0.08 ms for an Optuna
search's 5,000 results told; PBT's parents and pools), so only those places are compared.
"""

from __future__ import annotations

import operator
import struct
from collections import deque
from collections.abc import Iterable
from contextlib import suppress
from itertools import compress, islice
from typing import Any, NamedTuple

from katib_resume.adapters.local.suggestion.column import Column, unpacked, unpacked_in

SET_SHARE = 4
"""A list whose changed items are more than one in this many is written whole."""
NOTED = 16
"""The copies ``noted`` remembers, the newest (a server's save follows its own draw)."""


class _Note(NamedTuple):
    before: Any
    value: Any
    places: tuple[Any, ...]


_notes: deque[_Note] = deque(maxlen=NOTED)
_BITS = struct.Struct("<d")


def noted(before: Any, value: Any, places: Iterable[Any]) -> None:
    """Say how ``value`` was made from ``before``, so that its change is found from
    ``places`` alone: a list that holds ``before``'s very items at its places but ``places``
    (indexes), and may have more after them; or a dict made as ``dict(before)`` and then its
    entries ``places`` (keys, none twice) set, new or not. Both are held until the record
    is made, or ``NOTED`` newer ones are noted: their identity is the proof."""
    _notes.append(_Note(before, value, tuple(places)))


def _places(before: Any, value: Any) -> tuple[Any, ...] | None:
    """The places ``noted`` for ``value`` made from ``before`` (``None``: none noted), the
    note forgotten: a record is made once, and the two are not held longer than needed."""
    for note in tuple(_notes):  # (a copy: servers of several Experiments may note at once)
        if note.value is value and note.before is before:
            with suppress(ValueError):  # (forgotten by another thread already)
                _notes.remove(note)
            return note.places
    return None


def diff(old: Any, new: Any) -> dict[str, Any]:
    """The delta that ``apply`` turns ``old`` into ``new`` with (``old`` is not changed)."""
    if not (isinstance(old, dict) and isinstance(new, dict)) or old.keys() != new.keys():
        return {"value": new}
    changes: dict[str, Any] = {}
    for key, value in new.items():
        before = old[key]
        if value is not before:
            change = _change(before, value)
            if change is not None:
                changes[key] = change
    return {"keys": changes}


def _change(before: Any, value: Any) -> dict[str, Any] | None:
    """How one entry of a dict cursor changed (``None``: it did not)."""
    if isinstance(before, dict) and isinstance(value, dict):
        added = _added(before, value)
        if added is not None:
            return {"merge": added} if added else None
    elif isinstance(before, list) and isinstance(value, list):
        if len(value) >= len(before):
            return _list_change(before, value)
    elif isinstance(before, Column) and isinstance(value, Column):
        if len(value) >= len(before):
            return _column_change(before, value)
    elif same(before, value):
        return None
    return {"value": value}


def _list_change(before: list[Any], value: list[Any]) -> dict[str, Any] | None:
    """How a list that is no shorter changed: the items it gained, and those of ``before``'s
    places it replaced (found by identity in C, then compared as JSON values), unless they
    are more than one in ``SET_SHARE``."""
    changed = [index for index in _moved(before, value) if not same(before[index], value[index])]
    return _set_change(value, changed, value[len(before) :])


def _column_change(before: Column, value: Column) -> dict[str, Any] | None:
    """How a column that is no shorter changed, as ``_list_change`` says it of a list: the
    entries of ``before``'s places whose bits differ (those ``noted``, or all of them
    compared in C), and the entries it gained."""
    old, new = before.doubles, value.doubles
    places = _places(before, value)
    if places is None:
        bits = memoryview(old).cast("B").cast("Q"), memoryview(new).cast("B").cast("Q")
        places = tuple(compress(range(len(old)), map(operator.ne, *bits)))
    changed = sorted(i for i in set(places) if i < len(old) and not _same_double(old[i], new[i]))
    return _set_change(value, changed, [value[i] for i in range(len(old), len(new))])


def _set_change(value: Any, changed: list[int], extend: list[Any]) -> dict[str, Any] | None:
    """The change of a list or a column into ``value``: its places ``changed`` set and
    ``extend`` added (``None``: neither), or ``value`` whole if more than one place in
    ``SET_SHARE`` changed."""
    if not changed:
        return {"extend": extend} if extend else None
    if len(changed) * SET_SHARE > len(value):
        return {"value": value}
    return {"set": [[index, value[index]] for index in changed], "extend": extend}


def _same_double(a: float, b: float) -> bool:
    """Whether two doubles have the same bits (``-0.0`` is not ``0.0``, nor one NaN another)."""
    return _BITS.pack(a) == _BITS.pack(b)


def _moved(before: list[Any], value: list[Any]) -> list[int]:
    """The places of ``before`` whose item in ``value`` is another object, in order: those
    ``noted``, or found by one identity pass."""
    places = _places(before, value)
    if places is not None:
        return sorted(place for place in set(places) if place < len(before))
    return list(compress(range(len(before)), map(operator.is_not, before, value)))


def _added(before: dict[str, Any], value: dict[str, Any]) -> dict[str, Any] | None:
    """The entries ``value`` sets in ``before``: those ``noted``, or found as those it adds
    if it starts with ``before``'s entries, in order and unchanged; ``None`` if neither."""
    count = len(before)
    keys = _places(before, value)
    if keys is not None and len(set(keys)) == len(keys):
        gained = len(keys) - sum(map(before.__contains__, keys))
        if len(value) == count + gained:
            return {key: value[key] for key in keys}
    if len(value) < count or list(before) != list(islice(value, count)):
        return None
    if not _all_same(list(before.values()), list(islice(value.values(), count))):
        return None
    return {key: value[key] for key in islice(value, count, None)}


def _all_same(before: list[Any], value: list[Any]) -> bool:
    """Whether ``value`` starts with ``before``'s items (the same objects, in C, or else the
    same JSON values)."""
    if all(map(operator.is_, before, value)):
        return True
    return all(map(same, before, value))


def same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same JSON value: of the same types throughout."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, list):  # e.g. PBT's pools, copied each call: their items are shared
        return len(a) == len(b) and _all_same(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, float):  # 0.0 == -0.0, which JSON writes apart
        return repr(a) == repr(b)
    return bool(a == b)  # (two columns: the same bits)


def apply(cursor: Any, delta: Any) -> Any:
    """The cursor after ``delta``, changing ``cursor`` in place where it can (the caller owns
    it: it was just read from the volume). Raises ``ValueError`` on a delta ``diff`` does not
    write (or a packed column that does not read)."""
    try:
        if "value" in delta:
            return unpacked_in(delta["value"])
        for key, change in delta["keys"].items():
            if "value" in change:
                cursor[key] = unpacked(change["value"])
            elif "merge" in change:
                cursor[key].update(change["merge"])
            elif "set" in change:
                _set(cursor[key], change["set"], change["extend"])
            else:  # (a list's, or a column's: ``Column.extend``)
                cursor[key].extend(change["extend"])
    except (AttributeError, KeyError, TypeError):
        raise ValueError("a cursor change that does not apply") from None
    return cursor


def _set(items: list[Any] | Column, changes: list[Any], extend: list[Any]) -> None:
    """``items`` with ``changes`` (``[index, value]`` pairs of places it has) set, then
    ``extend`` added; raises ``ValueError`` (before any change) on another change."""
    if isinstance(items, Column):
        items.set(changes, extend)
        return
    pairs = [pair for pair in changes if type(pair) is list and len(pair) == 2]
    if len(pairs) != len(changes) or not isinstance(items, list) or not isinstance(extend, list):
        raise ValueError("a cursor change that does not apply")
    if not all(type(index) is int and 0 <= index < len(items) for index, _ in pairs):
        raise ValueError("a cursor change that does not apply")
    for index, value in pairs:
        items[index] = value
    items.extend(extend)
