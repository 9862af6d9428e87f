"""Saving and loading the fake cluster: a full round trip, and a writer killed mid-way
(the SQLite store itself, migration and readers: ``test_fake_sqlite.py``)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake import FakeCluster, FakeWorld, StateFileError, load, save
from katib_resume.adapters.fake.persistence import STATE_FILE, read
from katib_resume.core.actions import ObjectRef
from tests.integration.test_fake_sqlite import legacy_state
from tests.integration.test_fake_world import DEPLOYMENT, NS, available, deployment, pvc


def busy_world(state_dir: Path) -> FakeWorld:
    """A world mid-way: a bound claim, a Deployment one tick from ready, events, time moved."""
    cluster, world = load(state_dir, ready_after_ticks=2)
    cluster.create(pvc())
    cluster.create(deployment())
    cluster.record_event(ObjectRef.of(deployment()), "Normal", "Created", "created it")
    cluster.clock.advance(42)
    world.tick()
    return world


def test_a_missing_state_file_is_an_empty_cluster(tmp_path: Path) -> None:
    cluster, world = load(tmp_path)
    assert cluster.store.all() == [] and cluster.cursor == 0
    assert world.volume_root == tmp_path / "volumes" and world.volume_root.is_dir()


def test_save_and_load_round_trip_everything(tmp_path: Path) -> None:
    world = busy_world(tmp_path)
    cluster = world.cluster
    assert not available(cluster)
    save(world, tmp_path)
    again, restored = load(tmp_path)
    assert again.store.to_dict() == cluster.store.to_dict()
    assert again.events == cluster.events and again.clock.now() == cluster.clock.now()
    assert again.cursor == cluster.cursor
    assert restored.ticks == 1 and restored.ready_after_ticks == 2
    assert restored.kubelet.pods == world.kubelet.pods
    restored.tick()  # the kubelet's timer carried over: ready on the second tick
    assert available(again)
    later = again.create(deployment(None) | {"metadata": {"name": "x", "namespace": NS}})
    assert int(later["metadata"]["resourceVersion"]) > cluster.store.version  # counters carried
    assert later["metadata"]["uid"] not in {o["metadata"]["uid"] for o in cluster.store.all()}
    directory = restored.volume_dir(NS, DEPLOYMENT.name)
    assert directory is not None and directory.is_relative_to(tmp_path / "volumes")


def test_the_watch_survives_a_restart(tmp_path: Path) -> None:
    world = busy_world(tmp_path)
    cursor = world.cluster.cursor - 2
    expected = world.cluster.changes_since(cursor)
    world.save(tmp_path)
    assert load(tmp_path)[0].changes_since(cursor) == expected


def test_a_write_that_cannot_commit_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = busy_world(tmp_path)
    cluster = world.cluster
    before = cluster.store.to_dict()
    journal = cluster.store.journal
    assert journal is not None
    real = journal.db

    class Full:  # the disk fills up in the middle of the write's transaction
        @property
        def in_transaction(self) -> bool:
            return real.in_transaction

        def execute(self, sql: str, *args: Any) -> object:
            if sql.startswith("INSERT INTO objects"):
                raise sqlite3.OperationalError("database or disk is full")
            return real.execute(sql, *args)

    monkeypatch.setattr(journal, "db", Full())
    with pytest.raises(sqlite3.OperationalError, match="full"):
        cluster.create(deployment(None) | {"metadata": {"name": "later", "namespace": NS}})
    monkeypatch.undo()
    after = cluster.store.to_dict()
    assert after.pop("uids") == before.pop("uids") + 1  # a UID spent (never reused) and
    assert after == before  # nothing else: nothing half-made in memory either
    assert len(read(tmp_path).list("apps/v1", "Deployment", NS, {})) == 1


def test_a_migration_killed_before_the_rename_leaves_the_previous_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    legacy = legacy_state(tmp_path)
    before = legacy.read_bytes()

    def killed(src: object, dst: object) -> None:
        raise OSError("killed before the rename")

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(StateFileError, match="killed"):
        load(tmp_path)
    monkeypatch.undo()
    assert legacy.read_bytes() == before and not (tmp_path / STATE_FILE).exists()
    assert len(load(tmp_path)[0].list("apps/v1", "Deployment", NS, {})) == 1


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b'{"format": 99}', b"[]"])
def test_an_unreadable_state_file_is_an_error_naming_it(tmp_path: Path, content: bytes) -> None:
    (tmp_path / STATE_FILE).write_bytes(content)
    with pytest.raises(StateFileError, match=str(tmp_path / STATE_FILE)):
        load(tmp_path)


def test_a_world_is_saved_beside_its_volumes_only(tmp_path: Path) -> None:
    world = FakeWorld(FakeCluster(), tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="beside"):
        save(world, tmp_path)
