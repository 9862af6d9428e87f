"""``Objects.fill`` (a cache's first list of a kind, put and indexed in one pass when the kind
holds nothing) leaves exactly the structure that forgetting the kind and putting each object
one by one leaves: the same tables in the same order, the same buckets with the same epochs,
items and change records, the same serial; so every reader's cursor reads the same changes."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.manifest import Manifest
from katib_resume.core.objects import EVERY, OWNER, Objects
from tests.property.test_objects import KINDS, objects

owned = st.builds(
    lambda o, uid: {**o, "metadata": {**o["metadata"], "ownerReferences": uid}},
    objects,
    st.sampled_from([[], [{"controller": True, "uid": "u1"}], [{"uid": "u2"}]]),
)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("put"), owned),
        st.tuples(st.just("pop"), st.sampled_from(KINDS), st.sampled_from(["x", "y", "z"])),
    ),
    max_size=12,
)


def _one_by_one(held: Objects, api_version: str, kind: str, items: list[Manifest]) -> None:
    """What ``fill`` did before its one-pass form: forget the kind, then ``put`` each."""
    for name in list(held.table(api_version, kind)):
        held.pop(api_version, kind, name)
    for obj in items:
        held.put(obj)


def _history(held: Objects, steps: list[tuple[Any, ...]]) -> None:
    for step in steps:
        if step[0] == "put":
            held.put(step[1])
        else:
            (api_version, kind), name = step[1], step[2]
            held.pop(api_version, kind, ("a", name))


def _structure(held: Objects) -> tuple[Any, ...]:
    index = held.index
    buckets = {
        key: (bucket.epoch, list(bucket.items.items()), list(bucket.touched.items()))
        for key, bucket in index._buckets.items()
    }
    tables = {kind: list(table.items()) for kind, table in held.by_kind.items() if table}
    return tables, buckets, index.serial


@given(ops, st.sampled_from(KINDS), st.lists(owned, max_size=8), st.booleans(), ops)
def test_fill_leaves_what_putting_one_by_one_leaves(
    before: list[tuple[Any, ...]],
    kind: tuple[str, str],
    items: list[Manifest],
    one_kind: bool,
    after: list[tuple[Any, ...]],
) -> None:
    if one_kind:  # most often, as a list answers: the kind's objects, each named once
        items = list(
            {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in items}.values()
        )
        items = [{**o, "apiVersion": kind[0], "kind": kind[1]} for o in items]
    filled, reference = Objects(), Objects()
    for held in (filled, reference):
        _history(held, before)
    cursors = [filled.changes(*kind, field, value, None).cursor for field, value in _FIELDS]
    filled.fill(*kind, items)
    _one_by_one(reference, *kind, items)
    assert _structure(filled) == _structure(reference)
    for (field, value), cursor in zip(_FIELDS, cursors, strict=True):
        for since in (None, cursor):
            assert filled.changes(*kind, field, value, since) == reference.changes(
                *kind, field, value, since
            )
    for held in (filled, reference):  # and the two go on alike
        _history(held, after)
    assert _structure(filled) == _structure(reference)


_FIELDS = [(EVERY, ""), ("l", "p"), (OWNER, "u1")]
