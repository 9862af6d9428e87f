"""Saving the fake cluster to disk and loading it back: a cluster that outlives a process.

A simulation that runs the controller as separate processes (the CLI, one command after another)
needs the cluster to persist between them. ``save`` writes everything the cluster and its world
hold (objects, the resourceVersion and UID counters, the watch log and its base, the Events,
the clock's time, the world's settings and the kubelet's timers) to one JSON file,
``<state_dir>/cluster.json``; the volumes' directories live beside it in
``<state_dir>/volumes``. Injected faults are not saved: they belong to one test's process.

The write is atomic, so a process killed mid-way never leaves half a cluster: the JSON goes to a
temporary file in the same directory, is flushed and ``fsync``-ed, replaces the old file with
``os.replace`` (atomic on POSIX) and the directory is ``fsync``-ed so that the rename itself is
durable. Until the rename, the previous file is intact.

Loading never guesses: a missing file is an empty cluster (the first run), but a file that
cannot be read or parsed raises ``StateFileError`` naming it, rather than silently starting an
empty cluster over somebody's data.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from katib_resume.adapters.atomic import write_atomically
from katib_resume.adapters.fake.clock import FakeClock
from katib_resume.adapters.fake.cluster import Event, FakeCluster
from katib_resume.adapters.fake.store import Store
from katib_resume.adapters.fake.world import FakeWorld
from katib_resume.core.actions import ObjectRef

STATE_FILE = "cluster.json"
VOLUMES = "volumes"
FORMAT = 1


class StateFileError(Exception):
    """The state file exists but cannot be used; the message names it."""


def save(world: FakeWorld, state_dir: Path) -> Path:
    """Write ``world`` and its cluster to ``state_dir`` atomically; return the file's path."""
    state_dir = Path(state_dir)
    expected = (state_dir / VOLUMES).resolve()
    if world.volume_root.resolve() != expected:
        raise ValueError(
            f"the world's volumes live in {world.volume_root}, not in {expected}: "
            "a saved cluster keeps its volumes beside its state file"
        )
    path = state_dir / STATE_FILE
    write_atomically(path, json.dumps(_dump(world), indent=1, sort_keys=True).encode())
    return path


def load(state_dir: Path, ready_after_ticks: int = 1) -> tuple[FakeCluster, FakeWorld]:
    """The cluster and world saved in ``state_dir``; empty ones if nothing was saved yet.

    ``ready_after_ticks`` only applies to a new (empty) world: a saved one keeps its settings.
    """
    state_dir = Path(state_dir)
    path = state_dir / STATE_FILE
    if not path.exists():
        cluster = FakeCluster()
        return cluster, FakeWorld(cluster, state_dir / VOLUMES, ready_after_ticks)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return _restore(data, state_dir / VOLUMES)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise StateFileError(
            f"{path}: cannot load the fake cluster's state ({type(error).__name__}: {error}); "
            "fix or remove the file"
        ) from error


def _dump(world: FakeWorld) -> dict[str, Any]:
    cluster = world.cluster
    return {
        "format": FORMAT,
        "clock": cluster.clock.now().isoformat(),
        "store": cluster.store.to_dict(),
        "events": [_event(e) for e in cluster.events],
        "world": {
            "ticks": world.ticks,
            "readyAfterTicks": world.ready_after_ticks,
            "defaultStorageClass": world.default_storage_class,
            "backgroundGC": world.background_gc,
            "deleteAnyHostPath": world.delete_any_hostpath,
            "pods": world.kubelet.to_dict(),
        },
    }


def _restore(data: dict[str, Any], volume_root: Path) -> tuple[FakeCluster, FakeWorld]:
    if data.get("format") != FORMAT:
        raise ValueError(f"unsupported format {data.get('format')!r} (expected {FORMAT})")
    clock = FakeClock(datetime.fromisoformat(data["clock"]))
    cluster = FakeCluster(clock, Store.from_dict(data["store"]))
    cluster.events.extend(_restore_event(e) for e in data["events"])  # never rebound: see for_cache
    saved = data["world"]
    world = FakeWorld(
        cluster,
        volume_root,
        int(saved["readyAfterTicks"]),
        default_storage_class=str(saved["defaultStorageClass"]),
        background_gc=bool(saved["backgroundGC"]),
        delete_any_hostpath=bool(saved["deleteAnyHostPath"]),
    )
    world.ticks = int(saved["ticks"])
    world.kubelet.load(saved["pods"])
    return cluster, world


def _event(event: Event) -> dict[str, Any]:
    ref = event.ref
    where = {"apiVersion": ref.api_version, "kind": ref.kind, "namespace": ref.namespace}
    return {
        "ref": {**where, "name": ref.name},
        "type": event.type,
        "reason": event.reason,
        "message": event.message,
        "time": event.time,
    }


def _restore_event(data: dict[str, Any]) -> Event:
    raw = data["ref"]
    ref = ObjectRef(raw["apiVersion"], raw["kind"], raw["namespace"], raw["name"])
    if data["type"] not in ("Normal", "Warning"):
        raise ValueError(f"unknown event type {data['type']!r}")
    return Event(ref, data["type"], data["reason"], data["message"], data["time"])
