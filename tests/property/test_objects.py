"""``core.objects.Objects``, the structure of both watch caches: versions only move forward,
an equal copy keeps the held object, and a selection is exactly the filter over everything."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.kube import Manifest
from katib_resume.core.objects import Objects

KINDS = [("v1", "Pod"), ("kubeflow.org/v1beta1", "Trial")]


def obj(kind: tuple[str, str], namespace: str, name: str, version: int, label: str) -> Manifest:
    meta = {"namespace": namespace, "name": name, "resourceVersion": str(version)}
    return {"apiVersion": kind[0], "kind": kind[1], "metadata": {**meta, "labels": {"l": label}}}


objects = st.builds(
    obj,
    st.sampled_from(KINDS),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["x", "y", "z"]),
    st.integers(1, 20),
    st.sampled_from(["p", "q"]),
)


@given(st.lists(objects, max_size=30))
def test_the_newest_version_of_each_object_is_held(arrivals: list[Manifest]) -> None:
    held = Objects()
    for arrival in arrivals:
        held.keep(arrival)
    newest: dict[tuple[str, ...], int] = {}
    for a in arrivals:
        key = (a["apiVersion"], a["kind"], a["metadata"]["namespace"], a["metadata"]["name"])
        newest[key] = max(newest.get(key, 0), int(a["metadata"]["resourceVersion"]))
    for (api_version, kind, namespace, name), version in newest.items():
        found = held.get(api_version, kind, namespace, name)
        assert found is not None and found["metadata"]["resourceVersion"] == str(version)


@given(
    st.lists(objects, max_size=30),
    st.sampled_from(KINDS),
    st.sampled_from([None, "a", "b"]),
    st.sampled_from([{}, {"l": "p"}, {"l": "q"}]),
)
def test_a_selection_is_the_filter_over_every_object(
    arrivals: list[Manifest],
    kind: tuple[str, str],
    namespace: str | None,
    labels: dict[str, str],
) -> None:
    held = Objects()
    for arrival in arrivals:
        held.keep(arrival)
    everything = [o for table in held.by_kind.values() for o in table.values()]
    expected = [
        o
        for o in everything
        if (o["apiVersion"], o["kind"]) == kind
        and namespace in (None, o["metadata"]["namespace"])
        and all(o["metadata"]["labels"].get(k) == v for k, v in labels.items())
    ]
    selected = held.select(*kind, namespace, labels)
    assert sorted(map(id, selected)) == sorted(map(id, expected))


def test_an_equal_copy_keeps_the_held_object_and_a_changed_one_replaces_it() -> None:
    held = Objects()
    first = obj(KINDS[0], "a", "x", 3, "p")
    held.keep(first)
    assert held.keep(copy.deepcopy(first)) is False
    assert held.get("v1", "Pod", "a", "x") is first
    changed = obj(KINDS[0], "a", "x", 3, "q")  # same version, other content (a mock server)
    assert held.keep(changed) is True and held.get("v1", "Pod", "a", "x") is changed
    assert held.discard(changed) is changed and held.get("v1", "Pod", "a", "x") is None
