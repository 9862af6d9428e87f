"""The k8s adapter over real HTTP with the real client, against kmock (filled in).

Every error path of the adapter runs here: answers kmock does not give by itself (409 on a
stale write, 410 during a watch, 422, 429 with Retry-After, 500, a slow server, a dropped
watch) are injected with ``KubeMock.fail``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from katib_resume.adapters.k8s.cluster import KubeCluster
from katib_resume.adapters.k8s.connect import to_url
from katib_resume.adapters.k8s.live import LiveCluster
from katib_resume.adapters.k8s.resources import RESOURCES
from katib_resume.adapters.k8s.store import Store
from katib_resume.adapters.k8s.transport import Retry, Transport
from katib_resume.adapters.k8s.watch import KindWatch
from katib_resume.core.actions import ObjectRef
from katib_resume.core.ports import (
    AlreadyExists,
    Conflict,
    Invalid,
    NotFound,
    TooLarge,
    Unavailable,
)
from tests.support.kube_mock import MockServer
from tests.support.waiting import eventually

KATIB = "kubeflow.org/v1beta1"


def experiment(namespace: str, name: str = "exp", **labels: str) -> dict[str, object]:
    return {
        "apiVersion": KATIB,
        "kind": "Experiment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"maxTrialCount": 3},
    }


class Sleeps:
    def __init__(self) -> None:
        self.slept: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.slept.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def transport(kube: MockServer, sleeps: Sleeps) -> Transport:
    return to_url(kube.url, timeout=(2.0, 2.0), retry=Retry(attempts=3, sleep=sleeps))


@pytest.fixture
def cluster(transport: Transport, namespace: str) -> Iterator[KubeCluster]:
    cluster = KubeCluster(transport, namespace=namespace)
    assert cluster.start(10)
    yield cluster
    cluster.close()


def ref(namespace: str, name: str = "exp") -> ObjectRef:
    return ObjectRef(KATIB, "Experiment", namespace, name)


def test_reads_come_from_the_watch_cache_without_api_calls(
    cluster: KubeCluster, transport: Transport, namespace: str
) -> None:
    cluster.create(experiment(namespace, team="a"))
    cluster.create(experiment(namespace, "other", team="b"))
    before = dict(transport.counts.counts)
    assert cluster.get(ref(namespace))["metadata"]["labels"] == {"team": "a"}
    found = cluster.list(KATIB, "Experiment", namespace, {"team": "b"})
    assert [o["metadata"]["name"] for o in found] == ["other"]
    assert dict(transport.counts.counts) == before
    with pytest.raises(NotFound):
        cluster.get(ref(namespace, "missing"))


def test_the_watch_brings_other_writers_changes(
    cluster: KubeCluster, transport: Transport, namespace: str
) -> None:
    path = f"/apis/{KATIB}/namespaces/{namespace}/experiments"
    transport.request("POST", path, body=experiment(namespace, "theirs"))
    eventually(lambda: bool(cluster.list(KATIB, "Experiment", namespace, {})))
    _, changes = cluster.changes_since(0)
    assert any(c.object["metadata"]["name"] == "theirs" for c in changes)


def test_a_create_that_finds_the_name_taken_loads_the_object_for_the_ownership_check(
    kube: MockServer, transport: Transport, namespace: str
) -> None:
    cluster = KubeCluster(transport, namespace=namespace)  # not started: an empty cache
    transport.request(
        "POST", f"/apis/{KATIB}/namespaces/{namespace}/experiments", body=experiment(namespace)
    )
    with pytest.raises(AlreadyExists):
        cluster.create(experiment(namespace))
    assert cluster.get(ref(namespace))["metadata"]["uid"]


def test_a_status_write_with_a_stale_version_is_a_conflict(
    cluster: KubeCluster, namespace: str
) -> None:
    created = cluster.create(experiment(namespace))
    first = created["metadata"]["resourceVersion"]
    written = cluster.update_status(ref(namespace), {"conditions": [], "startTime": "x"}, first)
    assert written["status"] == {"conditions": [], "startTime": "x"}
    with pytest.raises(Conflict):
        cluster.update_status(ref(namespace), {"conditions": []}, first)


def test_a_status_write_replaces_the_status_and_touches_nothing_else(
    kube: MockServer, cluster: KubeCluster, namespace: str
) -> None:
    created = cluster.create(experiment(namespace))
    one = cluster.update_status(
        ref(namespace), {"a": 1, "b": {"c": 2}}, created["metadata"]["resourceVersion"]
    )
    two = cluster.update_status(ref(namespace), {"b": {"d": 3}}, one["metadata"]["resourceVersion"])
    stored = kube.call(lambda m: m.stored(f"{KATIB}/experiments", namespace, "exp"))
    assert two["status"] == stored["status"] == {"b": {"d": 3}}
    assert stored["spec"] == {"maxTrialCount": 3}


def test_an_unchanged_write_is_not_sent(
    cluster: KubeCluster, transport: Transport, namespace: str
) -> None:
    created = cluster.create(experiment(namespace))
    version = created["metadata"]["resourceVersion"]
    before = transport.counts.counts["write"]
    cluster.update_spec(ref(namespace), {"maxTrialCount": 3}, version)
    cluster.set_finalizers(ref(namespace), [], version)
    assert transport.counts.counts["write"] == before


def test_spec_and_finalizer_writes(kube: MockServer, cluster: KubeCluster, namespace: str) -> None:
    created = cluster.create(experiment(namespace))
    spec = cluster.update_spec(
        ref(namespace), {"maxTrialCount": 5}, created["metadata"]["resourceVersion"]
    )
    assert spec["metadata"]["generation"] == 2
    done = cluster.set_finalizers(ref(namespace), ["x/y"], spec["metadata"]["resourceVersion"])
    stored = kube.call(lambda m: m.stored(f"{KATIB}/experiments", namespace, "exp"))
    assert stored["metadata"]["finalizers"] == ["x/y"] == done["metadata"]["finalizers"]
    assert stored["spec"] == {"maxTrialCount": 5}


def test_delete_sends_a_uid_precondition_and_a_missing_object_is_not_found(
    kube: MockServer, cluster: KubeCluster, namespace: str
) -> None:
    created = cluster.create(experiment(namespace))
    kube.call(lambda m: m.fail("DELETE", f"/{namespace}/experiments/exp", 409))
    with pytest.raises(Conflict):
        cluster.delete(ref(namespace), "somebody-else")
    cluster.delete(ref(namespace), created["metadata"]["uid"])
    eventually(lambda: not cluster.list(KATIB, "Experiment", namespace, {}))
    with pytest.raises(NotFound):
        cluster.delete(ref(namespace), created["metadata"]["uid"])


def test_422_is_invalid_and_not_retried(
    kube: MockServer, cluster: KubeCluster, sleeps: Sleeps, namespace: str
) -> None:
    kube.call(lambda m: m.fail("POST", f"/{namespace}/experiments", 422))
    with pytest.raises(Invalid):
        cluster.create(experiment(namespace))
    assert sleeps.slept == []


@pytest.mark.parametrize(
    ("code", "message"), [(500, "etcdserver: request is too large"), (413, "")]
)
def test_an_object_too_large_to_store_is_too_large_and_not_retried(
    kube: MockServer,
    cluster: KubeCluster,
    sleeps: Sleeps,
    namespace: str,
    *,
    code: int,
    message: str,
) -> None:
    """etcd's refusal comes back as a 500 (kubernetes/kubernetes#112152), the API server's own
    as a 413: either way the object will not be stored however often it is sent."""
    created = cluster.create(experiment(namespace))
    path = f"/{namespace}/experiments/exp"
    kube.call(lambda m: m.fail("PATCH", path, code, message=message, times=3))
    with pytest.raises(TooLarge):
        cluster.update_status(ref(namespace), {"x": 1}, created["metadata"]["resourceVersion"])
    assert sleeps.slept == []


def test_server_errors_are_retried_with_backoff_then_succeed(
    kube: MockServer, cluster: KubeCluster, sleeps: Sleeps, namespace: str
) -> None:
    kube.call(lambda m: m.fail("POST", f"/{namespace}/experiments", 500, times=2))
    cluster.create(experiment(namespace))
    assert len(sleeps.slept) == 2


def test_throttling_waits_at_least_retry_after(
    kube: MockServer, cluster: KubeCluster, sleeps: Sleeps, namespace: str
) -> None:
    created = cluster.create(experiment(namespace))
    kube.call(
        lambda m: m.fail(
            "PATCH", f"/{namespace}/experiments/exp", 429, headers={"Retry-After": "7"}
        )
    )
    cluster.update_status(ref(namespace), {"x": 1}, created["metadata"]["resourceVersion"])
    assert sleeps.slept and sleeps.slept[0] >= 7


def test_a_server_that_stays_down_is_unavailable_with_its_retry_after(
    kube: MockServer, cluster: KubeCluster, sleeps: Sleeps, namespace: str
) -> None:
    kube.call(
        lambda m: m.fail(
            "POST", f"/{namespace}/experiments", 503, times=3, headers={"Retry-After": "2"}
        )
    )
    with pytest.raises(Unavailable) as failed:
        cluster.create(experiment(namespace))
    assert failed.value.retry_after == 2
    assert len(sleeps.slept) == 2


def test_a_slow_server_times_out_as_unavailable(
    kube: MockServer, sleeps: Sleeps, namespace: str
) -> None:
    """Each of the three attempts outlasts the read timeout (the server answers after 1.5 times
    it); both are short so the test takes about a second."""
    read_timeout = 0.3
    transport = to_url(kube.url, timeout=(2.0, read_timeout), retry=Retry(attempts=3, sleep=sleeps))
    cluster = KubeCluster(transport, namespace=namespace)  # not started: create needs no cache
    delay = 1.5 * read_timeout
    kube.call(lambda m: m.fail("POST", f"/{namespace}/experiments", 500, times=3, delay=delay))
    started = time.monotonic()
    with pytest.raises(Unavailable):
        cluster.create(experiment(namespace))
    assert time.monotonic() - started < 8.0
    assert len(sleeps.slept) == 2  # every attempt timed out, none answered


def test_a_dropped_watch_resumes_and_410_lists_again(
    kube: MockServer, transport: Transport, namespace: str
) -> None:
    store, stop = Store(), threading.Event()
    resource = RESOURCES[(KATIB, "Experiment")]
    watch = KindWatch(transport, store, resource, namespace, stop, read_timeout=0.3, pause=0.01)
    watch.start()
    try:
        assert watch.synced.wait(5)
        assert watch.relists == 1
        path = f"/apis/{KATIB}/namespaces/{namespace}/experiments"
        transport.request("POST", path, body=experiment(namespace, "first"))
        eventually(lambda: len(store.select(KATIB, "Experiment", namespace, {})) == 1)
        # the silent watch times out (a dropped connection) and resumes without a list;
        # the resumed watch is answered 410: the version is too old, so it lists again
        kube.call(lambda m: m.fail("WATCH", f"/{namespace}/experiments", 410))
        eventually(lambda: watch.relists == 2)
        transport.request("POST", path, body=experiment(namespace, "second"))
        eventually(lambda: len(store.select(KATIB, "Experiment", namespace, {})) == 2)
    finally:
        stop.set()


def test_a_relist_reports_what_a_broken_watch_missed(namespace: str) -> None:
    store = Store()
    first, second = experiment(namespace, "a"), experiment(namespace, "b")
    store.replace(KATIB, "Experiment", namespace, [first, second])
    changed = {**second, "spec": {"maxTrialCount": 9}}
    cursor = store.cursor
    store.replace(KATIB, "Experiment", namespace, [changed])
    _, changes = store.changes_since(cursor)
    assert [(c.type, c.object["metadata"]["name"]) for c in changes] == [
        ("DELETED", "a"),
        ("MODIFIED", "b"),
    ]


def test_an_error_event_410_in_the_stream_means_list_again(
    cluster: KubeCluster, namespace: str
) -> None:
    watch = next(w for w in cluster.watches if w.resource.kind == "Experiment")
    with pytest.raises(Exception, match="too old"):
        watch._apply({"type": "ERROR", "object": {"code": 410, "message": "too old"}})


def test_events_go_to_the_events_api_about_the_object(
    kube: MockServer, cluster: KubeCluster, namespace: str
) -> None:
    created = cluster.create(experiment(namespace))
    cluster.record_event(ref(namespace), "Normal", "ExperimentCreated", "hello")
    events = kube.call(lambda m: m.all("events.k8s.io/v1/events"))
    mine = [e for e in events if e["metadata"]["namespace"] == namespace]
    assert mine[0]["regarding"]["uid"] == created["metadata"]["uid"]
    assert (mine[0]["reason"], mine[0]["note"], mine[0]["type"]) == (
        "ExperimentCreated",
        "hello",
        "Normal",
    )


def test_an_event_that_cannot_be_recorded_does_not_fail_the_reconcile(
    kube: MockServer, cluster: KubeCluster, namespace: str
) -> None:
    kube.call(lambda m: m.fail("POST", f"/{namespace}/events", 500, times=3))
    cluster.record_event(ref(namespace), "Warning", "X", "lost")
    assert cluster.dropped_events == 1


def test_a_live_cluster_reads_the_server_every_time(
    kube: MockServer, transport: Transport, namespace: str
) -> None:
    live = LiveCluster(transport)
    with pytest.raises(NotFound):
        live.get(ref(namespace))
    path = f"/apis/{KATIB}/namespaces/{namespace}/experiments"
    transport.request("POST", path, body=experiment(namespace, team="a"))
    assert live.get(ref(namespace))["kind"] == "Experiment"  # no watch: read at once
    assert [o["metadata"]["name"] for o in live.list(KATIB, "Experiment", namespace, {})] == ["exp"]
    assert live.list(KATIB, "Experiment", namespace, {"team": "b"}) == []


def test_a_write_answer_arriving_after_the_deletion_does_not_revive_the_object(
    namespace: str,
) -> None:
    """Found as a flaky contract test: the answer to the patch that removed the last finalizer
    came back after the watch had reported the object deleted, and put it back for good."""
    store = Store()

    def version(uid: str, resource_version: str) -> dict[str, Any]:
        meta = {"name": "exp", "namespace": namespace, "uid": uid}
        return {
            "apiVersion": KATIB,
            "kind": "Experiment",
            "metadata": meta | {"resourceVersion": resource_version},
        }

    dead = version("u-1", "7")
    store.observe("ADDED", dead)
    store.observe("DELETED", dead)
    store.remember(dead)  # the late answer, same version
    assert store.select(KATIB, "Experiment", namespace, {}) == []
    store.remember(version("u-2", "9"))  # a new object of the same name is welcome
    assert len(store.select(KATIB, "Experiment", namespace, {})) == 1


def test_a_write_behind_a_newer_watched_version_conflicts_without_asking_the_server(
    cluster: KubeCluster, transport: Transport, namespace: str
) -> None:
    created = cluster.create(experiment(namespace))
    first = created["metadata"]["resourceVersion"]
    path = f"/apis/{KATIB}/namespaces/{namespace}/experiments/exp/status"
    body = {"status": {"by": "another writer"}}
    transport.request("PATCH", path, body=body, content_type="application/merge-patch+json")
    eventually(lambda: cluster.get(ref(namespace))["metadata"]["resourceVersion"] != first)
    before = dict(transport.counts.counts)
    with pytest.raises(Conflict):
        cluster.update_status(ref(namespace), {"mine": 1}, first)
    assert dict(transport.counts.counts) == before
