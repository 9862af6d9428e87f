"""A relist lists only the kinds whose digests differ: none when the cache agrees with the
server, the one kind a lost event left wrong, and a store opened from disk has the digests of
the store that wrote it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from katib_resume.adapters.fake import FakeCluster, load
from katib_resume.adapters.fake.persistence import read
from katib_resume.app.loop.informer import Informer
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.resources import CONTROLLED_KINDS

TRIAL = (API_VERSION, "Trial")


def _trial(n: int) -> Manifest:
    meta = {"name": f"t{n}", "namespace": "ns"}
    return {"apiVersion": API_VERSION, "kind": "Trial", "metadata": meta, "spec": {}}


def _populated(cluster: FakeCluster, trials: int = 20) -> FakeCluster:
    for n in range(trials):
        cluster.api.create(_trial(n))
    cluster.api.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}})
    return cluster


def _spied(monkeypatch: pytest.MonkeyPatch, informer: Informer) -> list[tuple[str, str]]:
    """The kinds the informer lists from now on."""
    listed: list[tuple[str, str]] = []
    inner, list_at = informer.inner, informer.inner.list_at

    def spy(api_version: str, kind: str) -> tuple[int, Sequence[Manifest]]:
        listed.append((api_version, kind))
        return list_at(api_version, kind)

    monkeypatch.setattr(inner, "list_at", spy)
    return listed


def test_a_relist_of_a_cache_that_agrees_lists_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _populated(FakeCluster())
    informer = Informer(cluster.for_cache())
    assert informer.listed == 2  # the first list: the two kinds that have objects
    informer.sync()
    listed = _spied(monkeypatch, informer)
    assert informer.relist() == [] and listed == []
    assert informer.cursor == cluster.cursor and informer.relists == 2
    assert informer.relist(full=True) == [] and len(listed) == len(CONTROLLED_KINDS)


def test_a_relist_lists_only_the_kind_a_lost_event_left_wrong(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = _populated(FakeCluster())
    informer = Informer(cluster.for_cache())
    listed = _spied(monkeypatch, informer)
    cluster.faults.watch.lose_next(1)
    moved = cluster.api.update_status(ObjectRef(*TRIAL, "ns", "t3"), {"phase": "x"}, None)
    informer.sync()
    assert informer.objects.get(*TRIAL, "ns", "t3") != moved  # the watch lost it
    changes = informer.relist()
    assert listed == [TRIAL] and [(c.type, c.object) for c in changes] == [("MODIFIED", moved)]
    assert informer.relist() == [] and listed == [TRIAL]


def test_a_relist_of_a_cache_behind_the_watch_lists_the_kinds_that_moved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = _populated(FakeCluster())
    informer = Informer(cluster.for_cache())
    listed = _spied(monkeypatch, informer)
    cluster.api.delete(ObjectRef(*TRIAL, "ns", "t0"), "")  # not yet synced
    changes = informer.relist()
    assert listed == [TRIAL] and [(c.type, c.object["metadata"]["name"]) for c in changes] == [
        ("DELETED", "t0")
    ]
    assert informer.cursor == cluster.cursor and informer.sync() == []


def test_a_store_opened_from_disk_has_the_digests_of_the_store_that_wrote_it(
    tmp_path: Path,
) -> None:
    cluster, world = load(tmp_path)
    _populated(cluster, trials=5)
    cluster.api.delete(ObjectRef(*TRIAL, "ns", "t1"), "")
    cluster.api.update_spec(ObjectRef(*TRIAL, "ns", "t2"), {"x": 1}, None)
    opened = read(tmp_path)
    for kind in (TRIAL, ("v1", "Service"), ("v1", "Pod")):
        assert opened.store.digest(*kind) == cluster.store.digest(*kind)
    assert opened.store.digest(*TRIAL).size == 4
    world.cluster.store.journal.close()  # type: ignore[union-attr]
