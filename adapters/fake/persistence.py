"""Keeping the fake cluster on disk: a cluster that outlives a process, and survives a kill.

A simulation that runs the controller as separate processes (the CLI, one command after another)
needs the cluster to persist between them. It lives in ``<state_dir>/cluster.db``, a SQLite
database (``sqlite.py``: kine's layout, one transaction per change), and the volumes'
directories beside it in ``<state_dir>/volumes``. ``load`` opens it for writing: from then on
every change of the store and every Event is committed as it happens, and ``checkpoint`` (each
step of the embedded runtime, and ``save``) commits the world's own state: the clock, the
ticks, the world's settings and the kubelet's timers. ``read`` opens it for reading only, and
needs no lock: a reader sees the last committed state while another process writes. A writer
holds the blocks of sealed objects unread until it needs a member (``sealed.py``: it keeps its
connection open, and reads them through it); a reader reads every member at once, since it
closes its connection. Injected faults are not saved: they belong to one test's process.

Loading never guesses: a missing database is an empty cluster (the first run), but one that
cannot be read raises ``StateFileError`` naming it and saying how to start over, rather than
silently starting an empty cluster over somebody's data. A state directory of the previous
format (one ``cluster.json`` written when a command ended) is migrated once, by the first
command that opens it for writing: the database is built beside it under a temporary name and
renamed into place, then ``cluster.json`` is renamed ``cluster.json.migrated`` (kept, never
deleted). A reader reads such a directory as it is, without migrating it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from katib_resume.adapters import heap
from katib_resume.adapters.fake import legacy, rows
from katib_resume.adapters.fake.clock import FakeClock
from katib_resume.adapters.fake.cluster import Event, FakeCluster
from katib_resume.adapters.fake.sqlite import Journal, connect
from katib_resume.adapters.fake.world import FakeWorld

STATE_FILE = "cluster.db"
LEGACY_FILE = legacy.STATE_FILE
MIGRATED_FILE = "cluster.json.migrated"
VOLUMES = "volumes"
START_OVER = "to start over, move the state directory away (nothing in it is deleted for you)"
T = TypeVar("T")
_UNREADABLE = (sqlite3.Error, OSError, UnicodeDecodeError, ValueError, KeyError, TypeError)


class StateFileError(Exception):
    """The state cannot be used (unreadable, unwritable); the message names the file."""


def exists(state_dir: Path) -> bool:
    """Whether ``state_dir`` holds a cluster (in either format)."""
    return (state_dir / STATE_FILE).exists() or (state_dir / LEGACY_FILE).exists()


def load(state_dir: Path, ready_after_ticks: int = 1) -> tuple[FakeCluster, FakeWorld]:
    """The cluster and world kept in ``state_dir``, opened for writing: every change from now
    on is committed as it happens. Empty ones if nothing was kept yet.

    ``ready_after_ticks`` only applies to a new (empty) world: a kept one keeps its settings.
    """
    state_dir = Path(state_dir)
    path = state_dir / STATE_FILE
    if not path.exists() and (state_dir / LEGACY_FILE).exists():
        _migrate(state_dir)
    db = _guarded(path, lambda: connect(path))
    try:
        with heap.paused():  # decoded JSON holds no cycles: nothing to collect (``heap``)
            later = lambda: connect(path, read_only=True)  # noqa: E731
            snapshot = _guarded(path, lambda: rows.read(db, later, sealed=True))
        cluster, world = _build(snapshot, state_dir, ready_after_ticks)
        if snapshot[2] is None:  # a new database: its first state, so that writes can follow
            _guarded(path, lambda: rows.write(db, (cluster.store, [], world_state(world))))
    except BaseException:
        db.close()
        raise
    cluster.store.journal = Journal(db, path)
    return cluster, world


def read(state_dir: Path) -> FakeCluster:
    """The cluster kept in ``state_dir``, read only and without any lock (nothing is created or
    migrated): the last committed state, while another command may be writing. Its Events are
    fetched when first read, up to the last one committed at the open (``rows._Later``), or
    read at the open from a database of a format without their index."""
    state_dir = Path(state_dir)
    path = state_dir / STATE_FILE
    if not path.exists():
        if (state_dir / LEGACY_FILE).exists():
            return _build(_legacy(state_dir), state_dir, 1)[0]
        return FakeCluster()
    db = _guarded(path, lambda: connect(path, read_only=True))
    try:
        with heap.paused():
            snapshot = _guarded(path, lambda: rows.read(db, lambda: connect(path, read_only=True)))
            return _build(snapshot, state_dir, 1)[0]
    finally:
        db.close()


def save(world: FakeWorld, state_dir: Path) -> Path:
    """Commit ``world`` and its cluster to ``state_dir``; return the database's path.

    A world loaded from there only needs its own state committed (``checkpoint``): its store's
    changes already are. Any other (an in-memory world) replaces what the database held."""
    state_dir = Path(state_dir)
    expected = (state_dir / VOLUMES).resolve()
    if world.volume_root.resolve() != expected:
        raise ValueError(
            f"the world's volumes live in {world.volume_root}, not in {expected}: "
            "a saved cluster keeps its volumes beside its state file"
        )
    path = state_dir / STATE_FILE
    journal = world.cluster.store.journal
    if journal is not None and journal.path.resolve() == path.resolve():
        checkpoint(world)
        return path
    db = connect(path)
    try:
        events = [e.to_dict() for e in world.cluster.events]
        rows.write(db, (world.cluster.store, events, world_state(world)))
    finally:
        db.close()
    return path


def checkpoint(world: FakeWorld) -> None:
    """Commit the world's own state, if its cluster is kept on disk (a no-op in memory)."""
    journal = world.cluster.store.journal
    if journal is not None:
        journal.checkpoint(world_state(world))


def close(world: FakeWorld) -> None:
    """Checkpoint and let go of the database (the in-memory cluster stays usable)."""
    journal = world.cluster.store.journal
    if journal is not None:
        try:
            checkpoint(world)
        finally:
            world.cluster.store.journal = None
            journal.close()


def world_state(world: FakeWorld) -> dict[str, Any]:
    return {
        "clock": world.cluster.clock.now().isoformat(),
        "world": {
            "ticks": world.ticks,
            "readyAfterTicks": world.ready_after_ticks,
            "defaultStorageClass": world.default_storage_class,
            "backgroundGC": world.background_gc,
            "deleteAnyHostPath": world.delete_any_hostpath,
            "pods": world.kubelet.to_dict(),
        },
    }


def _build(
    snapshot: rows.Snapshot, state_dir: Path, ready_after_ticks: int
) -> tuple[FakeCluster, FakeWorld]:
    store, events, state = snapshot
    clock = FakeClock() if state is None else FakeClock(datetime.fromisoformat(state["clock"]))
    cluster = FakeCluster(clock, store)
    path = state_dir / STATE_FILE  # never rebound: see for_cache
    cluster.events.defer(events, lambda stored: _guarded(path, lambda: _events(stored)))
    if state is None:
        return cluster, FakeWorld(cluster, state_dir / VOLUMES, ready_after_ticks)
    saved = state["world"]
    world = FakeWorld(
        cluster,
        state_dir / VOLUMES,
        int(saved["readyAfterTicks"]),
        default_storage_class=str(saved["defaultStorageClass"]),
        background_gc=bool(saved["backgroundGC"]),
        delete_any_hostpath=bool(saved["deleteAnyHostPath"]),
    )
    world.ticks = int(saved["ticks"])
    world.kubelet.load(saved["pods"])
    return cluster, world


def _events(stored: Sequence[dict[str, Any]]) -> list[Event]:
    return [Event.from_dict(e) for e in stored]


def _legacy(state_dir: Path) -> rows.Snapshot:
    path = state_dir / LEGACY_FILE
    return _guarded(path, lambda: legacy.read(path))


def _migrate(state_dir: Path) -> None:
    """Build ``cluster.db`` from ``cluster.json`` under a temporary name, rename it into place,
    then keep the old file as ``cluster.json.migrated``. A failure leaves ``cluster.json``."""
    snapshot = _legacy(state_dir)
    path, temporary = state_dir / STATE_FILE, state_dir / (STATE_FILE + ".migrating")
    for leftover in (temporary, Path(f"{temporary}-wal"), Path(f"{temporary}-shm")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()

    def build() -> None:
        db = connect(temporary)
        try:
            rows.write(db, snapshot)
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            db.close()
        os.replace(temporary, path)
        os.replace(state_dir / LEGACY_FILE, state_dir / MIGRATED_FILE)

    _guarded(temporary, build)


def _guarded(path: Path, call: Callable[[], T]) -> T:
    """``call()``, with any failure to read or write the state as one ``StateFileError``."""
    try:
        return call()
    except _UNREADABLE as error:
        reason = f"{type(error).__name__}: {error}"
        message = f"{path}: cannot use the fake cluster's state ({reason}); {START_OVER}"
        raise StateFileError(message) from error
