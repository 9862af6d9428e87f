"""A store opened on objects (a state read back) indexes them in one pass each, exactly as
storing them one after another does: the same objects by kind, and the same owner index (UIDs,
dependents, the suspects whose owner is not there or comes later, the creation order), so the
garbage collector works alike whichever way the store was made."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.owners import OwnerIndex
from katib_resume.adapters.fake.store import Store, key_of
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest

UIDS = [f"u{n}" for n in range(6)]
owners = st.lists(
    st.builds(
        lambda uid, controller: {"uid": uid, "controller": controller},
        st.sampled_from([*UIDS, "gone"]),
        st.booleans(),
    ),
    max_size=2,
)
objects = st.lists(
    st.tuples(
        st.sampled_from([("v1", "Pod"), ("apps/v1", "Deployment"), ("v1", "PersistentVolume")]),
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(UIDS),
        owners,
    ),
    max_size=12,
)


def _object(kind: tuple[str, str], name: str, uid: str, refs: list[Any]) -> Manifest:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": uid}
    if refs:
        meta["ownerReferences"] = refs
    return {"apiVersion": kind[0], "kind": kind[1], "metadata": meta}


def _owners(index: OwnerIndex) -> tuple[Any, ...]:
    order = list(index.order.items())
    return index.keys, index.dependents, index.suspects, order, index.take_suspects()


@given(objects)
def test_a_store_opened_on_objects_indexes_them_as_storing_each_does(
    drawn: list[tuple[Any, ...]],
) -> None:
    held: dict[Any, Manifest] = {}
    for spec in drawn:
        obj = _object(*spec)
        held[key_of(ObjectRef.of(obj))] = obj
    opened = Store(dict(held))
    one_by_one = Store()
    one_by_one.objects = dict(held)
    for key, obj in held.items():
        one_by_one._index(key, obj, None)
    assert opened.kinds == one_by_one.kinds
    assert [list(table) for table in opened.kinds.values()] == [
        list(table) for table in one_by_one.kinds.values()
    ]
    assert _owners(opened.owners) == _owners(one_by_one.owners)
