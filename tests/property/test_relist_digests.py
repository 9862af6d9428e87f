"""A relist that skips the kinds whose digests agree repairs exactly what a full relist does.

Random writes of three kinds (some the informer's own, some the API server's direct), read by
the informer through a watch that loses, repeats and reorders events (armed for the next few,
and at random rates besides); at each relist
drawn, a twin of the informer (the same cache, the same cluster) relists in full, and both must
end with the same cache, cursor and reported changes, which equal the server's objects. The
digests the cache and the store keep as they change equal the ones made from scratch.
"""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.loop.informer import Informer, Relisted
from katib_resume.core.actions import ObjectRef
from katib_resume.core.digest import Digests
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import ClusterError

KINDS = ((API_VERSION, "Trial"), (API_VERSION, "Experiment"), ("v1", "Service"))
FAULTS = {"lose": "lose_next", "repeat": "duplicate_next", "reorder": "reorder_next"}
OP = st.tuples(
    st.sampled_from(
        ["create", "update", "delete", "own-update", "sync", "relist", "lose", "repeat", "reorder"]
    ),
    st.sampled_from(KINDS),
    st.integers(0, 3),
)
RATES = st.tuples(st.floats(0, 0.4), st.floats(0, 0.3), st.floats(0, 0.3))


def _ref(kind: tuple[str, str], n: int) -> ObjectRef:
    return ObjectRef(kind[0], kind[1], "ns", f"o{n}")


def _write(cluster: FakeCluster, informer: Informer, op: str, ref: ObjectRef, step: int) -> None:
    """One write: to the API server directly (a neighbour's), or the informer's own."""
    body = {"apiVersion": ref.api_version, "kind": ref.kind, "spec": {"step": step}}
    try:
        if op == "create":
            cluster.api.create(body | {"metadata": {"name": ref.name, "namespace": "ns"}})
        elif op == "update":
            cluster.api.update_spec(ref, {"step": step}, None)
        elif op == "delete":
            cluster.api.delete(ref, "")
        else:
            informer.update_spec(ref, {"step": -step}, None)
    except ClusterError:
        pass  # missing, or already there: the cache may be behind too


def _versions(objects: list[Manifest]) -> dict[tuple[str, str], tuple[str, str]]:
    return {
        (o["metadata"]["namespace"], o["metadata"]["name"]): (
            o["metadata"]["uid"],
            o["metadata"]["resourceVersion"],
        )
        for o in objects
    }


def _said(changes: list[Relisted]) -> list[tuple[str, str, str, str]]:
    return [
        (c.type, c.object["kind"], c.object["metadata"]["name"], c.object["metadata"]["uid"])
        for c in changes
    ]


def _from_scratch(objects: list[Manifest], kind: tuple[str, str]) -> Digests:
    digests = Digests()
    for obj in objects:
        digests.moved(kind, None, obj)
    return digests


def _check_relist(cluster: FakeCluster, informer: Informer) -> None:
    twin = copy.deepcopy(informer, {id(informer.inner): informer.inner})
    listed = informer.listed
    assert _said(informer.relist()) == _said(twin.relist(full=True))
    assert informer.cursor == twin.cursor
    assert informer.objects.by_kind == twin.objects.by_kind
    for kind in KINDS:
        held, stored = informer.objects.table(*kind).values(), cluster.store.of_kind(*kind)
        assert _versions(list(held)) == _versions(stored)
        assert informer.objects.digest(*kind) == cluster.store.digest(*kind)
    assert informer.listed - listed <= len(KINDS)


@settings(max_examples=300)  # each a few milliseconds; a lost update needs a few steps to show
@given(st.lists(OP, min_size=1, max_size=60), RATES, st.integers(0, 2**16))
def test_a_relist_by_digests_leaves_the_cache_a_full_relist_would(
    ops: list[tuple[str, tuple[str, str], int]], rates: tuple[float, float, float], seed: int
) -> None:
    cluster = FakeCluster()
    informer = Informer(cluster.for_cache(), KINDS)
    for kind in KINDS[1:]:  # some objects the informer has seen: what a lost update leaves old
        for n in range(2):
            _write(cluster, informer, "create", _ref(kind, n), 0)
    informer.sync()
    loss, duplication, reordering = rates
    cluster.faults.watch.at_random(
        loss=loss, duplication=duplication, reordering=reordering, seed=seed
    )
    for step, (op, kind, n) in enumerate(ops):
        if op in FAULTS:
            getattr(cluster.faults.watch, FAULTS[op])(n)  # the next n events
        elif op == "sync":
            informer.sync()
        elif op == "relist":
            _check_relist(cluster, informer)
        else:
            _write(cluster, informer, op, _ref(kind, n), step)
        for each in KINDS:
            held = list(informer.objects.table(*each).values())
            assert informer.objects.digest(*each) == _from_scratch(held, each).of(each)
            stored = cluster.store.of_kind(*each)
            assert cluster.store.digest(*each) == _from_scratch(stored, each).of(each)
    _check_relist(cluster, informer)
