"""``core.objects.Objects``, the structure of both watch caches: versions only move forward,
an equal copy keeps the held object, and a selection (indexed or not) and a bucket's changes
replayed from a cursor are exactly the filter over everything."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.katib import LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.objects import EVERY, Cursor, Objects, key_of

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


def _owned(kind: tuple[str, str], namespace: str, name: str, version: int, label: str) -> Manifest:
    """An object whose experiment label and controller owner vary too (the indexed fields)."""
    made = obj(kind, namespace, name, version, label)
    made["metadata"]["labels"][LABEL_EXPERIMENT] = label
    made["metadata"]["ownerReferences"] = [{"uid": f"u-{label}", "controller": True}]
    return made


steps = st.lists(
    st.tuples(
        st.sampled_from(["keep", "put", "discard"]),
        st.builds(
            _owned,
            st.sampled_from(KINDS),
            st.sampled_from(["a", "b"]),
            st.sampled_from(["x", "y", "z"]),
            st.integers(1, 20),
            st.sampled_from(["p", "q", "r"]),
        ),
    ),
    max_size=40,
)


def _scan(held: Objects, kind: tuple[str, str], namespace: str | None, value: str) -> list[int]:
    """The naive answer: every object of the kind, filtered (``value`` "": every value)."""
    return sorted(
        id(o)
        for o in held.table(*kind).values()
        if namespace in (None, o["metadata"]["namespace"])
        and value in ("", o["metadata"]["labels"][LABEL_EXPERIMENT])
    )


@given(steps, st.sampled_from([None, "a", "b"]))
def test_indexed_reads_equal_a_scan_after_any_sequence_of_changes(
    history: list[tuple[str, Manifest]], namespace: str | None
) -> None:
    """Selecting by an indexed label, listing by owner and replaying a bucket's changes from a
    cursor all equal the naive scan over the kind, after every step."""
    held = Objects()
    cursors: dict[tuple[tuple[str, str], str], Cursor | None] = {}
    mirrors: dict[tuple[tuple[str, str], str], dict[tuple[str, str], int]] = {}
    for op, arrival in history:
        {"keep": held.keep, "put": held.put, "discard": held.discard}[op](arrival)
        for kind in KINDS:
            for value in ("p", "q", "r", ""):
                field = EVERY if value == "" else LABEL_EXPERIMENT
                if value:
                    labelled = held.select(*kind, namespace, {LABEL_EXPERIMENT: value})
                    assert sorted(map(id, labelled)) == _scan(held, kind, namespace, value)
                    owned = held.owned(*kind, f"u-{value}")
                    assert sorted(map(id, owned)) == _scan(held, kind, None, value)
                delta = held.changes(*kind, field, value, cursors.get((kind, value)))
                mirror = {} if delta.complete else mirrors.get((kind, value), {})
                for name in delta.removed:
                    mirror.pop(name)
                mirror.update({key_of(o)[2:]: id(o) for o in delta.changed})
                cursors[(kind, value)], mirrors[(kind, value)] = delta.cursor, mirror
                assert sorted(mirror.values()) == _scan(held, kind, None, value)
