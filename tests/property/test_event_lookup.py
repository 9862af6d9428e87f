"""The Events ``describe`` shows for an object are those a scan of every Event finds.

For any sequence of Events about several objects (namespaced and cluster-scoped ones, objects
that differ in one part of their key only, a namespace ``""`` beside none), recorded into a
state on disk, some before it is reopened and some after: each object's Events as
``FakeCluster.events_about`` gives them (through the store's index for those read back, in
memory for those recorded since) are the scan's, in order and in content, for the writer that
recorded them, for a reader of the state, for an in-memory cluster, and for a reader of the same
state in format 5 (no index: a scan) and the writer that upgrades it; and ``describe``'s
timeline of each object is the same from each. So are ``get events NAME``'s Events
(``listing``, through the index's names with each Event's place), for names of objects, Events'
own names (the object's name and the place in hex), and an object named like an Event.
"""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake import Event, FakeCluster
from katib_resume.adapters.fake.persistence import close, load, read
from katib_resume.app.cli.describe import _timeline
from katib_resume.app.cli.events import event_manifest, event_matches
from katib_resume.app.cli.get import listing
from katib_resume.app.cli.kinds import EVENT
from katib_resume.core.actions import EventType, ObjectRef
from katib_resume.core.manifest import Manifest
from tests.support.old_stores import as_format_5

OBJECTS = [
    ObjectRef("kubeflow.org/v1beta1", "Trial", "a", "x"),
    ObjectRef("kubeflow.org/v1beta1", "Trial", "a", "y"),
    ObjectRef("kubeflow.org/v1beta1", "Trial", "b", "x"),
    ObjectRef("kubeflow.org/v1beta1", "Experiment", "a", "x"),
    ObjectRef("kubeflow.org/v1", "Trial", "a", "x"),  # another apiVersion: the same for describe
    ObjectRef("v1", "PersistentVolume", None, "x"),
    ObjectRef("v1", "PersistentVolume", "", "x"),  # "" is not cluster-scoped's None
    ObjectRef("kubeflow.org/v1beta1", "Trial", "a", "x.0000000000000001"),  # named as an Event
]
NAMES = [
    ("x",),
    ("y", "x"),
    ("x.0000000000000001",),
    ("x.0000000000000002", "y.0000000000000003"),
    ("y.000000000000000a", "z"),
    ("x.0000000000000001.0000000000000004",),
    ("z",),
]
"""``get events NAME``'s names: objects' names and Events' own names, some about no Event."""
Recorded = tuple[int, EventType, str, str]
"""Which object, the type, the reason and the message."""
events = st.lists(
    st.tuples(
        st.integers(0, len(OBJECTS) - 1),
        st.sampled_from(["Normal", "Warning"]),
        st.sampled_from(["Created", "Running", "Done"]),
        st.text(max_size=5),
    ),
    max_size=30,
)


def record(cluster: FakeCluster, recorded: list[Recorded]) -> None:
    for index, type_, reason, message in recorded:
        cluster.record_event(OBJECTS[index], type_, reason, message)
        cluster.clock.advance(1)


def scanned(every: list[Event], ref: ObjectRef) -> list[Event]:
    """What ``describe`` found before the index: every Event, matched by kind, namespace and
    name."""
    key = (ref.kind, ref.namespace, ref.name)
    return [e for e in every if (e.ref.kind, e.ref.namespace, e.ref.name) == key]


def described(ref: ObjectRef) -> Manifest:
    meta: Manifest = {"name": ref.name}
    if ref.namespace is not None:
        meta["namespace"] = ref.namespace
    return {"apiVersion": ref.api_version, "kind": ref.kind, "metadata": meta}


def assert_found_as_scanned(cluster: FakeCluster, every: list[Event]) -> None:
    memory = FakeCluster(cluster.clock)
    memory.events.extend(every)
    now = cluster.clock.now()
    for ref in OBJECTS:
        assert list(cluster.events_about(ref.kind, ref.namespace, ref.name)) == scanned(every, ref)
        assert list(memory.events_about(ref.kind, ref.namespace, ref.name)) == scanned(every, ref)
        obj = described(ref)
        assert _timeline(cluster, obj, now) == _timeline(memory, obj, now)
    for names in NAMES:
        for ns in (None, "a", "b", "default"):
            assert listing(cluster, EVENT, ns, names) == listed(every, ns, names)
    assert list(cluster.events) == every


def listed(every: list[Event], ns: str | None, names: tuple[str, ...]) -> list[Manifest]:
    """What ``get events NAME`` found before the index: every Event made a manifest, matched."""
    made = (event_manifest(event, place) for place, event in enumerate(every, 1))
    return [manifest for manifest in made if event_matches(manifest, ns, names)]


@given(events, events, st.booleans())
def test_the_events_about_an_object_are_the_scans(
    before: list[Recorded], after: list[Recorded], older: bool
) -> None:
    with TemporaryDirectory() as root:
        state = Path(root)
        cluster, world = load(state)
        record(cluster, before)
        every = list(cluster.events)
        assert_found_as_scanned(cluster, every)
        close(world)
        if older:
            as_format_5(state)
        assert_found_as_scanned(read(state), every)  # older: read as it is, by a scan
        cluster, world = load(state)  # older: upgraded, its Events' objects filled in
        record(cluster, after)  # these kept in memory, the others read back through the index
        every = list(cluster.events)
        assert_found_as_scanned(cluster, every)
        close(world)
        assert_found_as_scanned(read(state), every)
