"""The fake's garbage collector reads an index of owners; it collects exactly what a collector
listing the whole cluster on every pass would (any graph, any order of deletions)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake import FakeCluster
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest

NAMES = [f"o{i}" for i in range(6)]
OP = st.tuples(st.sampled_from(["create", "delete", "collect"]), st.sampled_from(NAMES),
               st.lists(st.sampled_from(NAMES), max_size=3))  # fmt: skip


def ref(name: str) -> ObjectRef:
    return ObjectRef("v1", "ConfigMap", "ns", name)


def naive_orphans(objects: list[Manifest]) -> list[str]:
    live = {o["metadata"]["uid"] for o in objects}
    return [
        o["metadata"]["name"]
        for o in objects
        if o["metadata"].get("ownerReferences")
        and all(r["uid"] not in live for r in o["metadata"]["ownerReferences"])
    ]


@given(st.lists(OP, max_size=40), st.booleans())
def test_the_indexed_collector_collects_what_a_full_scan_would(
    ops: list[tuple[str, str, list[str]]], synchronous: bool
) -> None:
    cluster = FakeCluster()
    api = cluster.api
    api.synchronous_gc = synchronous
    uids: dict[str, str] = {}  # every UID a name ever had: owners gone, or never there
    for op, name, owners in ops:
        current = api.store.find(ref(name))
        if op == "create" and current is None:
            refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": o,
                     "uid": uids.get(o, f"never-{o}")} for o in owners]  # fmt: skip
            made = cluster.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": name, "namespace": "ns",
                                                "ownerReferences": refs}})  # fmt: skip
            uids[name] = made["metadata"]["uid"]
        elif op == "delete" and current is not None:
            cluster.delete(ref(name), "")
        elif op == "collect":
            expected = naive_orphans(api.store.all())
            assert api.collect_orphans() == len(expected)
            left = {o["metadata"]["name"] for o in api.store.all()}
            assert not left & set(expected)
