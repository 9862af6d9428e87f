"""``Index.added`` (a cache's first list put in bulk, ``core.index_fill``) leaves exactly what
``moved(kind, name, None, obj)`` of each object in order leaves, for objects of every shape:
labels present, absent, empty or not text; owner references absent, several, not a
controller's, without a UID; metadata missing. The bulk passes read the plain shapes, and
anything else is left to ``Index.fields`` one object at a time: both are checked here. So does
it into buckets that hold objects already and remember names removed (a block read into a
kind: ``core.objects``), whose records come back last, as a move leaves them."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.index_fill import placed
from katib_resume.core.object_index import EVERY, OWNER, Index

KIND = ("v1", "Pod")
LABELS = ("a", "b")
_text = st.sampled_from(["p", "q"])
_labels = st.one_of(
    st.dictionaries(st.sampled_from(["a", "b", "c"]), _text, max_size=3),
    st.dictionaries(st.just("a"), st.integers(0, 2), max_size=1),  # not text
    st.none(),
)
_ref = st.fixed_dictionaries(
    {},
    optional={
        "controller": st.sampled_from([True, False, None]),
        "uid": st.sampled_from(["u1", "u2", ""]),
    },
)
_refs = st.one_of(st.none(), st.lists(_ref, max_size=2), st.just([{"controller": True, "uid": 7}]))
_meta = st.fixed_dictionaries({}, optional={"labels": _labels, "ownerReferences": _refs})
_obj = st.one_of(  # any shape
    st.builds(lambda m: {"metadata": m}, _meta), st.just({}), st.just({"metadata": None})
)
# most often the plain shape of a list of Trials: one label value, one controller owner
_plain = st.builds(
    lambda label, uid: {
        "metadata": {
            "labels": {"a": label},
            "ownerReferences": [{"controller": True, "uid": uid}],
        }
    },
    _text,
    st.sampled_from(["u1", "u2"]),
)


def _structure(index: Index) -> tuple[Any, ...]:
    buckets = {
        key: (bucket.epoch, list(bucket.items.items()), list(bucket.touched.items()))
        for key, bucket in index._buckets.items()
    }
    return buckets, index.serial


@given(st.lists(st.one_of(_obj, _plain, _plain), max_size=8), st.integers(0, 3))
def test_added_leaves_what_moving_one_by_one_leaves(objs: list[Any], serial: int) -> None:
    named = [(("ns", f"o{i}"), obj) for i, obj in enumerate(objs)]
    bulk, reference = Index(LABELS), Index(LABELS)
    bulk.serial = reference.serial = serial  # other kinds' changes before
    bulk.added(KIND, named)
    for name, obj in named:
        reference.moved(KIND, name, None, obj)
    assert _structure(bulk) == _structure(reference)


@given(st.lists(_plain, min_size=1, max_size=8))
def test_plain_objects_are_placed_in_bulk(objs: list[Any]) -> None:
    """Objects of the plain shape are read by the C-level passes, not one by one."""
    groups = placed(LABELS, (EVERY, ""), OWNER, objs)
    assert groups is not None
    index = Index(LABELS)
    expected: dict[tuple[str, str], list[int]] = {}
    for at, obj in enumerate(objs):
        for pair in index.fields(obj):
            expected.setdefault(pair, []).append(at)
    assert {pair: list(at) for pair, at in groups.items()} == expected


_history = st.lists(
    st.tuples(st.integers(0, 5), st.one_of(st.none(), _plain)),  # None: the name removed
    max_size=12,
)


@given(_history, st.lists(st.tuples(st.integers(0, 5), _plain), max_size=6))
def test_added_after_a_history_leaves_what_moving_one_by_one_leaves(
    history: list[tuple[int, Any]], objs: list[tuple[int, Any]]
) -> None:
    bulk, reference = Index(LABELS), Index(LABELS)
    held: dict[tuple[str, str], Any] = {}
    for n, obj in history:
        name = ("ns", f"o{n}")
        for index in (bulk, reference):
            index.moved(KIND, name, held.get(name), obj)
        if obj is None:
            held.pop(name, None)
        else:
            held[name] = obj
    named = list({("ns", f"o{n}"): obj for n, obj in objs if ("ns", f"o{n}") not in held}.items())
    bulk.added(KIND, named)
    for name, obj in named:
        reference.moved(KIND, name, None, obj)
    assert _structure(bulk) == _structure(reference)
