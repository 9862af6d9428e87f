"""One contract for the cluster port, run against the fake cluster and the k8s adapter on kmock.

The same calls must give the same observable results on both: the embedded runtime's honesty
is what makes its property tests say something about the real cluster. Where kmock cannot
model a rule (a UID precondition on delete), the case says so and runs on the fake alone.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from katib_resume.adapters.fake import FakeCluster
from katib_resume.adapters.k8s.cluster import KubeCluster
from katib_resume.adapters.k8s.connect import connect, to_url
from katib_resume.adapters.k8s.transport import Transport
from katib_resume.core.actions import ObjectRef
from katib_resume.core.ports import AlreadyExists, Cluster, Conflict, NotFound
from tests.support.kube_mock import MockServer
from tests.support.waiting import eventually

KATIB = "kubeflow.org/v1beta1"


class Subject:
    def __init__(self, cluster: Cluster, name: str) -> None:
        self.cluster, self.name = cluster, name

    def until(self, check: Callable[[], bool], seconds: float = 10.0) -> None:
        """Wait for ``check`` (a watch-fed cluster sees another writer's change a moment
        later; the fake at once)."""
        eventually(check, seconds=seconds, what="the cluster showing the change", pause=0.01)

    def gone(self, at: ObjectRef) -> bool:
        try:
            self.cluster.get(at)
        except NotFound:
            return True
        return False


@pytest.fixture(params=["fake", "kube", pytest.param("real", marks=pytest.mark.cluster)])
def subject(request: pytest.FixtureRequest, namespace: str) -> Iterator[Subject]:
    if request.param == "fake":
        yield Subject(FakeCluster(), "fake")
        return
    if request.param == "real":
        transport = _real_cluster(namespace)
    else:
        kube: MockServer = request.getfixturevalue("kube")
        transport = to_url(kube.url)
    cluster = KubeCluster(transport, namespace=namespace)
    assert cluster.start(10)
    yield Subject(cluster, "kube")
    cluster.close()


def _real_cluster(namespace: str) -> Transport:
    """The cluster of ``$KUBECONFIG`` (with Katib's CRDs installed), in a fresh namespace."""
    kubeconfig = os.environ.get("KUBECONFIG")
    if not kubeconfig:
        pytest.skip("no KUBECONFIG: the contract runs against a real cluster only when set")
    transport = connect(kubeconfig)
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    with contextlib.suppress(AlreadyExists):
        transport.request("POST", "/api/v1/namespaces", body=body)
    return transport


def trial(namespace: str, name: str, experiment: str) -> dict[str, Any]:
    return {
        "apiVersion": KATIB,
        "kind": "Trial",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"katib.kubeflow.org/experiment": experiment},
        },
        "spec": {"objective": {"type": "minimize"}},
    }


def ref(namespace: str, name: str) -> ObjectRef:
    return ObjectRef(KATIB, "Trial", namespace, name)


def test_created_objects_have_identity_and_can_be_read_back(
    subject: Subject, namespace: str
) -> None:
    created = subject.cluster.create(trial(namespace, "t1", "e"))
    meta = created["metadata"]
    assert meta["uid"] and meta["resourceVersion"] and meta["creationTimestamp"]
    assert meta["generation"] == 1
    assert subject.cluster.get(ref(namespace, "t1"))["metadata"]["uid"] == meta["uid"]


def test_a_second_create_of_a_name_is_already_exists(subject: Subject, namespace: str) -> None:
    subject.cluster.create(trial(namespace, "t1", "e"))
    with pytest.raises(AlreadyExists):
        subject.cluster.create(trial(namespace, "t1", "e"))


def test_lists_select_by_namespace_and_labels(subject: Subject, namespace: str) -> None:
    subject.cluster.create(trial(namespace, "a", "one"))
    subject.cluster.create(trial(namespace, "b", "two"))
    subject.until(lambda: len(subject.cluster.list(KATIB, "Trial", namespace, {})) == 2)
    found = subject.cluster.list(
        KATIB, "Trial", namespace, {"katib.kubeflow.org/experiment": "two"}
    )
    assert [o["metadata"]["name"] for o in found] == ["b"]
    assert subject.cluster.list(KATIB, "Trial", "elsewhere", {}) == []


def test_status_writes_replace_the_status_and_refuse_stale_versions(
    subject: Subject, namespace: str
) -> None:
    created = subject.cluster.create(trial(namespace, "t", "e"))
    first = created["metadata"]["resourceVersion"]
    one = subject.cluster.update_status(ref(namespace, "t"), {"a": 1, "b": 2}, first)
    two = subject.cluster.update_status(
        ref(namespace, "t"), {"b": 3}, one["metadata"]["resourceVersion"]
    )
    assert two["status"] == {"b": 3}
    assert two["metadata"]["generation"] == 1  # a status write is not a spec change
    with pytest.raises(Conflict):
        subject.cluster.update_status(ref(namespace, "t"), {"c": 4}, first)


def test_spec_writes_bump_the_generation(subject: Subject, namespace: str) -> None:
    created = subject.cluster.create(trial(namespace, "t", "e"))
    written = subject.cluster.update_spec(
        ref(namespace, "t"),
        {"objective": {"type": "maximize"}},
        created["metadata"]["resourceVersion"],
    )
    assert written["spec"] == {"objective": {"type": "maximize"}}
    assert written["metadata"]["generation"] == 2


def test_finalizers_hold_a_deleted_object_until_removed(subject: Subject, namespace: str) -> None:
    created = subject.cluster.create(trial(namespace, "t", "e"))
    held = subject.cluster.set_finalizers(
        ref(namespace, "t"), ["x.io/keep"], created["metadata"]["resourceVersion"]
    )
    subject.cluster.delete(ref(namespace, "t"), created["metadata"]["uid"])
    subject.until(
        lambda: bool(subject.cluster.get(ref(namespace, "t"))["metadata"].get("deletionTimestamp"))
    )
    deleting = subject.cluster.get(ref(namespace, "t"))
    assert deleting["metadata"].get("deletionTimestamp")
    subject.cluster.set_finalizers(ref(namespace, "t"), [], deleting["metadata"]["resourceVersion"])
    subject.until(lambda: subject.gone(ref(namespace, "t")))
    assert held["metadata"]["finalizers"] == ["x.io/keep"]


def test_deleting_a_missing_object_is_not_found(subject: Subject, namespace: str) -> None:
    with pytest.raises(NotFound):
        subject.cluster.delete(ref(namespace, "nothing"), "uid")


def test_a_delete_with_another_uid_is_a_conflict(subject: Subject, namespace: str) -> None:
    if subject.name != "fake":
        pytest.skip(
            "kmock ignores delete preconditions; the adapter's 409 path is injected "
            "in test_k8s_adapter"
        )
    created = subject.cluster.create(trial(namespace, "t", "e"))
    with pytest.raises(Conflict):
        subject.cluster.delete(ref(namespace, "t"), "another-uid")
    assert subject.cluster.get(ref(namespace, "t"))["metadata"]["uid"] == created["metadata"]["uid"]
