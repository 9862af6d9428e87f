"""The k8s adapter's store repaired from the API server when its watch lost an event (kmock).

A watch that drops events without an error is modelled by a store that throws the watch's
events away (``Deaf``): the watch ran, the store never saw them (kmock replays every object when
a watch resumes, so every event is dropped, replays too, and only a list can repair the store).
The tests never wait for a particular event: kmock may send a change as a replay instead, or
not at all when it happened before the watch connected; the store is deaf to it either way.
The periodic relist brings the object back and logs only that change; a write refused as stale
re-reads it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from katib_resume.adapters.k8s.cluster import KubeCluster
from katib_resume.adapters.k8s.connect import to_url
from katib_resume.adapters.k8s.resources import RESOURCES
from katib_resume.adapters.k8s.store import ChangeType, Store
from katib_resume.adapters.k8s.transport import Retry, Transport
from katib_resume.adapters.k8s.watch import KindWatch
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Conflict, NotFound
from tests.support.kube_mock import MockServer
from tests.support.waiting import eventually

KATIB = "kubeflow.org/v1beta1"


class Deaf(Store):
    """A store that loses every watch event while ``deaf`` (and counts them)."""

    def __init__(self) -> None:
        super().__init__()
        self.deaf = False
        self.lost: dict[str, int] = {}

    def observe(self, type_: ChangeType, obj: Manifest) -> None:
        if self.deaf:
            self.lost[type_] = self.lost.get(type_, 0) + 1
            return
        super().observe(type_, obj)


def experiment(namespace: str, name: str = "exp") -> dict[str, Any]:
    return {
        "apiVersion": KATIB,
        "kind": "Experiment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"maxTrialCount": 3},
    }


@pytest.fixture
def transport(kube: MockServer) -> Transport:
    return to_url(kube.url, timeout=(2.0, 2.0), retry=Retry(attempts=1, sleep=lambda _: None))


def _path(namespace: str, name: str = "") -> str:
    base = f"/apis/{KATIB}/namespaces/{namespace}/experiments"
    return f"{base}/{name}" if name else base


def _max_trials(store: Store, namespace: str) -> object:
    held = store.get((KATIB, "Experiment", namespace, "exp"))
    return None if held is None else held["spec"]["maxTrialCount"]


def _watch(transport: Transport, store: Store, namespace: str, relist: float | None) -> KindWatch:
    resource = RESOURCES[(KATIB, "Experiment")]
    stop = threading.Event()
    return KindWatch(
        transport,
        store,
        resource,
        namespace,
        stop,
        read_timeout=0.3,
        pause=0.01,
        relist_seconds=relist,
    )


@pytest.fixture
def deaf() -> Deaf:
    return Deaf()


def test_a_periodic_relist_repairs_a_lost_update_and_logs_only_it(
    transport: Transport, deaf: Deaf, namespace: str
) -> None:
    transport.request("POST", _path(namespace), body=experiment(namespace))
    transport.request("POST", _path(namespace), body=experiment(namespace, "other"))
    watch = _watch(transport, deaf, namespace, relist=0.5).start()
    try:
        assert watch.synced.wait(5)
        cursor = deaf.cursor
        deaf.deaf = True
        patch = {"spec": {"maxTrialCount": 7}}
        transport.request(
            "PATCH",
            _path(namespace, "exp"),
            body=patch,
            content_type="application/merge-patch+json",
        )
        eventually(lambda: _max_trials(deaf, namespace) == 7, what="the relist repaired it")
        assert watch.relists >= 2 and deaf.lost
        _, changes = deaf.changes_since(cursor)
        assert {(c.type, c.object["metadata"]["name"]) for c in changes} == {("MODIFIED", "exp")}
    finally:
        watch.stop.set()


def test_without_a_period_only_a_410_relists(
    transport: Transport, deaf: Deaf, namespace: str
) -> None:
    transport.request("POST", _path(namespace), body=experiment(namespace))
    watch = _watch(transport, deaf, namespace, relist=None).start()
    try:
        assert watch.synced.wait(5)
        deaf.deaf = True
        patch = {"spec": {"maxTrialCount": 7}}
        transport.request(
            "PATCH",
            _path(namespace, "exp"),
            body=patch,
            content_type="application/merge-patch+json",
        )
        eventually(lambda: bool(deaf.lost), what="the watch's news was lost")
        threading.Event().wait(1.0)  # several resumed watches, no relist
        assert watch.relists == 1 and _max_trials(deaf, namespace) == 3
    finally:
        watch.stop.set()


@pytest.fixture
def cluster(transport: Transport, namespace: str) -> Iterator[KubeCluster]:
    cluster = KubeCluster(transport, namespace=namespace, kinds=[(KATIB, "Experiment")])
    cluster.store = deaf = Deaf()
    for watch in cluster.watches:
        watch.store = deaf
    assert cluster.start(10)
    yield cluster
    cluster.close()


def test_a_write_refused_as_stale_rereads_the_object(
    cluster: KubeCluster, transport: Transport, namespace: str
) -> None:
    store = cluster.store
    assert isinstance(store, Deaf)
    created = cluster.create(experiment(namespace))
    ref = ObjectRef.of(created)
    stale = created["metadata"]["resourceVersion"]
    store.deaf = True
    patch = {"spec": {"maxTrialCount": 7}}
    transport.request(
        "PATCH",
        _path(namespace, "exp"),
        body=patch,
        content_type="application/merge-patch+json",
    )
    assert _max_trials(store, namespace) == 3
    with pytest.raises(Conflict):
        cluster.update_status(ref, {"trials": 1}, stale)
    assert _max_trials(store, namespace) == 7  # healed at the refused write


def test_a_write_to_an_object_gone_unseen_forgets_it(
    cluster: KubeCluster, transport: Transport, namespace: str
) -> None:
    store = cluster.store
    assert isinstance(store, Deaf)
    created = cluster.create(experiment(namespace))
    store.deaf = True
    transport.request("DELETE", _path(namespace, "exp"))
    cursor = store.cursor
    with pytest.raises(NotFound):
        cluster.update_status(
            ObjectRef.of(created), {"trials": 1}, created["metadata"]["resourceVersion"]
        )
    assert _max_trials(store, namespace) is None
    _, changes = store.changes_since(cursor)
    assert [c.type for c in changes] == ["DELETED"]  # told, as the watch would have
