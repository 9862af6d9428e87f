"""The fake watch's faults: what a reader is handed, deterministic, and the log stays true."""

from __future__ import annotations

import pytest

from katib_resume.adapters.fake import FakeCluster
from katib_resume.adapters.fake.watch_faults import WatchFaults
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Gone


def _object(kind: str, name: str) -> Manifest:
    api = API_VERSION if kind in ("Experiment", "Trial") else "v1"
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "ns"}}


def _cluster(*names: str) -> FakeCluster:
    cluster = FakeCluster()
    for name in names:
        kind, _, short = name.partition("/")
        cluster.create(_object(kind, short))
    return cluster


def _seen(cluster: FakeCluster, cursor: int = 0) -> list[str]:
    _, events = cluster.changes_since(cursor)
    return [f"{e.type[0]}:{e.ref.kind}/{e.ref.name}" for e in events]


def test_lost_events_are_skipped_by_kind_and_type_and_the_cursor_moves_past() -> None:
    cluster = _cluster("Experiment/a", "Service/s", "Experiment/b")
    cluster.faults.watch.lose_next(1, kind="Experiment", type="ADDED")
    cursor, events = cluster.changes_since(0)
    assert [e.ref.name for e in events] == ["s", "b"]
    assert cursor == cluster.cursor == 3 and cluster.faults.watch.lost == 1
    assert not cluster.faults.watch.pending
    assert [e.ref.name for e in cluster.store.log.events()] == ["a", "s", "b"]  # history true


def test_a_duplicated_event_comes_twice_in_a_row() -> None:
    cluster = _cluster("Experiment/a", "Experiment/b")
    cluster.faults.watch.duplicate_next(1)
    assert _seen(cluster) == ["A:Experiment/a", "A:Experiment/a", "A:Experiment/b"]


def test_a_reordered_event_is_overtaken_by_another_objects_but_never_its_own() -> None:
    cluster = _cluster("Experiment/a", "Service/s", "Experiment/b")
    cluster.faults.watch.reorder_next(1)
    assert _seen(cluster) == ["A:Service/s", "A:Experiment/a", "A:Experiment/b"]
    cluster = _cluster("Experiment/a")
    cluster.api.update_spec(cluster.store.log.events()[0].ref, {"maxTrialCount": 3}, None)
    cluster.faults.watch.reorder_next(1)
    assert _seen(cluster) == ["A:Experiment/a", "M:Experiment/a"]


def test_a_reordered_last_event_is_late_not_lost() -> None:
    cluster = _cluster("Experiment/a")
    cluster.faults.watch.reorder_next(1)
    cursor, events = cluster.changes_since(0)
    assert events == [] and cluster.faults.watch.pending
    cluster.faults.clear()  # stops faults, not the delivery of what was held back
    _, late = cluster.changes_since(cursor)
    assert [e.ref.name for e in late] == ["a"] and not cluster.faults.watch.pending


def test_an_expired_watch_is_gone_once() -> None:
    cluster = _cluster("Experiment/a")
    cluster.faults.watch.expire()
    assert cluster.faults.pending
    with pytest.raises(Gone):
        cluster.changes_since(0)
    assert _seen(cluster) == ["A:Experiment/a"]


def test_random_faults_repeat_under_one_seed_and_differ_under_another() -> None:
    def run(seed: int) -> list[str]:
        cluster = _cluster(*(f"Experiment/e{i}" for i in range(60)))
        cluster.faults.watch.at_random(loss=0.2, duplication=0.2, reordering=0.2, seed=seed)
        return _seen(cluster)

    assert run(1) == run(1)
    assert run(1) != run(2)
    names = run(1)
    assert len(set(names)) < 60 and len(names) != len(set(names))  # some lost, some repeated


def test_rates_and_counts_are_checked() -> None:
    faults = WatchFaults()
    with pytest.raises(ValueError, match="within"):
        faults.at_random(loss=1.5)
    with pytest.raises(ValueError, match=">= 0"):
        faults.lose_next(-1)
    faults.at_random(loss=0.5)
    assert faults.pending
    faults.clear()
    assert not faults.pending


def test_a_random_expiry_makes_reads_gone_now_and_then() -> None:
    cluster = _cluster("Experiment/a")
    cluster.faults.watch.at_random(expiry=0.5, seed=3)
    outcomes = []
    for _ in range(20):
        try:
            cluster.changes_since(cluster.cursor)
            outcomes.append("read")
        except Gone:
            outcomes.append("gone")
    assert set(outcomes) == {"read", "gone"}
    with pytest.raises(ValueError, match="add up"):
        cluster.faults.watch.at_random(loss=0.6, duplication=0.6)
