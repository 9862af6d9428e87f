"""The watch-fed cache keeps list and watch consistent, even when a list is stale."""

from __future__ import annotations

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.loop.informer import Informer
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION

REF = ObjectRef(API_VERSION, "Experiment", "ns", "e")


def experiment() -> dict[str, object]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Experiment",
        "metadata": {"name": "e", "namespace": "ns"},
    }


def test_a_relist_from_a_stale_list_replays_the_change_it_missed() -> None:
    """Found by the restart-sequence property: a controller restarted while its reads were one
    change behind listed without the newest object and, watching from *now*, never saw it."""
    cluster = FakeCluster()
    cluster.create(experiment())
    cluster.faults.stale_reads(100)  # every list of the relist is one change behind
    informer = Informer(cluster)
    cluster.faults.clear()
    assert informer.list(API_VERSION, "Experiment", None, {}) == []  # the list was stale...
    changes = informer.sync()
    assert changes is not None and [c.type for c in changes] == ["ADDED"]  # ...and is repaired
    assert informer.get(REF)["metadata"]["name"] == "e"


def test_a_fresh_list_replays_nothing() -> None:
    cluster = FakeCluster()
    cluster.create(experiment())
    informer = Informer(cluster)
    assert informer.sync() == []
    assert informer.get(REF)["metadata"]["name"] == "e"
