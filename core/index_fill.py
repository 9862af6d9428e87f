"""Where a cache's first list puts each object in ``core.object_index.Index``, found in bulk.

A restart's first list of the Trials holds thousands of objects, and ``Index.fields`` read
one at a time (a set built per object, its labels and owner references walked in Python) was
most of the informer's first list. Objects of the shape Kubernetes gives them (a ``metadata``
object, a ``labels`` object of text, at most one owner reference: every Trial has exactly one)
are read here in C-level passes instead: ``map`` over ``operator`` getters, a set of the types
seen to check the shape, and the objects grouped by value (one group when every object has
the same value, as every Trial of one Experiment has). Objects of any other shape are left to
``Index.fields``, one by one (``placed`` answers ``None``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from operator import and_, itemgetter, methodcaller, truth

from katib_resume.core.manifest import Manifest

Pair = tuple[str, str]
"""An index field and its value (``Index.fields``)."""
Positions = list[int] | range
"""Where in the objects given a pair's objects are, in order."""
_META, _FIRST = itemgetter("metadata"), itemgetter(0)
_LABELS, _REFS = methodcaller("get", "labels"), methodcaller("get", "ownerReferences")
_CONTROLLER, _UID = methodcaller("get", "controller"), methodcaller("get", "uid")


def placed(
    labels: tuple[str, ...], every: Pair, owner: str, objects: Sequence[Manifest]
) -> dict[Pair, Positions] | None:
    """The positions of ``objects`` each (field, value) pair indexes, in order, as
    ``Index.fields`` gives the pairs (``every``: the pair of every object; ``owner``: the field
    of the controller owner's UID); ``None`` if any object is not of the shape read here."""
    if every[0] in labels or owner in labels:
        return None
    try:
        metas = list(map(_META, objects))
    except (KeyError, TypeError):
        return None
    if not _all(metas, dict):
        return None
    found: dict[Pair, Positions] = {every: range(len(objects))} if objects else {}
    sets = list(map(_LABELS, metas))
    if not _all(sets, dict):
        return None
    for key in labels:
        values = list(map(methodcaller("get", key), sets))
        if not _all(values, str, type(None)):
            return None
        _group(found, key, range(len(values)), values)
    return _owned(found, owner, metas)


def _owned(
    found: dict[Pair, Positions], owner: str, metas: list[dict[str, object]]
) -> dict[Pair, Positions] | None:
    """``found`` with the controller owners' pairs: each object's first reference that names
    a controller and a UID (``Index.fields``), when every object holds one reference, or
    none."""
    refs = list(map(_REFS, metas))
    if _all(refs, type(None)):
        return found
    if not _all(refs, list) or set(map(len, refs)) != {1}:
        return None
    firsts = list(map(_FIRST, refs))
    if not _all(firsts, dict):
        return None
    uids = list(map(_UID, firsts))
    if set(map(_CONTROLLER, firsts)) == {True} and _all(uids, str) and "" not in uids:
        _group(found, owner, range(len(uids)), uids)  # every one a controller (every Trial)
        return found
    held = list(map(and_, map(truth, map(_CONTROLLER, firsts)), map(truth, uids)))
    values = list(compress(uids, held))
    if not _all(values, str):
        return None
    _group(found, owner, list(compress(range(len(uids)), held)), values)
    return found


def _group(
    found: dict[Pair, Positions],
    field: str,
    positions: Positions,
    values: Sequence[str | None],
) -> None:
    """Add to ``found`` the positions of each value of ``field`` (``None``: not indexed)."""
    distinct = set(values)
    if len(distinct) == 1 and None not in distinct:
        found[(field, str(values[0]))] = positions
        return
    for at, value in zip(positions, values, strict=True):
        if value is not None:
            group = found.setdefault((field, value), [])
            assert isinstance(group, list)  # a range is only ever a whole field's
            group.append(at)


def _all(values: Sequence[object], *types: type) -> bool:
    return set(map(type, values)) <= set(types)
