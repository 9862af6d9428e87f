"""1,000 FromVolume lifecycles on the fake cluster: run, complete, restart, complete, delete.

Each lifecycle is Katib's end-to-end scenario (docs/katib-contract.md#end-to-end-tests): the
from-volume example with ``maxTrialCount: 2, parallelTrialCount: 1``, completed, its budget raised
to 3, completed again, then deleted until nothing is left. The lifecycles run one after another on
one embedded runtime. API calls are counted through proxies of the cluster port: behind the
runtime's watch-fed cache (every API call, whoever made it) and in front of the controller (its own
writes); a write that the API server found to change nothing is a no-op write. The ``fsync`` calls
of the timed run (the suggestion state's atomic saves) are counted and timed, so that the share of
the wall time that is the disk's durability is printed with it.

The proxy in front of the controller is itself a watch cache with an index (``CountingCache``
answers ``changes`` from the informer): a proxy without it would make the controller list and
fold every Trial on every reconcile, as it must for a cluster with no index, and the benchmark
would time a path the runtime never takes.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from katib_resume.adapters.fake.store import Store
from katib_resume.app.loop.informer import Change, Informer, Watched
from katib_resume.core.actions import EventType, ObjectRef
from katib_resume.core.digest import Digest
from katib_resume.core.manifest import Manifest
from katib_resume.core.objects import Cursor, Delta
from katib_resume.core.ports import Cluster
from tests.support.sim import Sim

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

READS = ("get", "list")


@dataclass
class CountingCluster:
    """The cluster port with every call counted, and no-op and condition-changing writes told
    apart (the fake keeps the ``resourceVersion`` of a write that changes nothing)."""

    inner: Cluster
    store: Store
    calls: Counter[str] = field(default_factory=Counter)

    def get(self, ref: ObjectRef) -> Manifest:
        self.calls["get"] += 1
        return self.inner.get(ref)

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        self.calls["list"] += 1
        return self.inner.list(api_version, kind, namespace, labels)

    def create(self, manifest: Manifest) -> Manifest:
        self.calls["create"] += 1
        return self.inner.create(manifest)

    def update(self, manifest: Manifest) -> Manifest:
        return self._write(
            "update",
            manifest["metadata"].get("resourceVersion"),
            lambda: self.inner.update(manifest),
        )

    def update_spec(self, ref: ObjectRef, spec: Manifest, resource_version: str | None) -> Manifest:
        return self._write(
            "update_spec",
            resource_version,
            lambda: self.inner.update_spec(ref, spec, resource_version),
        )

    def update_status(
        self, ref: ObjectRef, status: Manifest, resource_version: str | None
    ) -> Manifest:
        before = self._conditions(ref)
        written = self._write(
            "update_status",
            resource_version,
            lambda: self.inner.update_status(ref, status, resource_version),
        )
        if status.get("conditions") != before:
            self.calls[f"conditions:{ref.kind}"] += 1
        return written

    def set_finalizers(
        self, ref: ObjectRef, finalizers: Sequence[str], resource_version: str | None
    ) -> Manifest:
        return self._write(
            "set_finalizers",
            resource_version,
            lambda: self.inner.set_finalizers(ref, finalizers, resource_version),
        )

    def delete(self, ref: ObjectRef, uid: str) -> None:
        self.calls["delete"] += 1
        self.inner.delete(ref, uid)

    def record_event(self, ref: ObjectRef, type_: EventType, reason: str, message: str) -> None:
        self.calls["event"] += 1
        self.inner.record_event(ref, type_, reason, message)

    def _write(self, name: str, version: str | None, call: Any) -> Manifest:
        self.calls[name] += 1
        written: Manifest = call()
        unchanged = version is not None and written["metadata"].get("resourceVersion") == version
        if unchanged and self._exists(ObjectRef.of(written)):  # gone: the last finalizer left
            self.calls["noop"] += 1
        return written

    def _stored(self, ref: ObjectRef) -> Manifest | None:
        """The fake's stored object, peeked at without a copy (a benchmark must not weigh
        its own bookkeeping into the figures)."""
        return self.store.find(ref)

    def _conditions(self, ref: ObjectRef) -> object:
        """The conditions before a status write."""
        return (self._stored(ref) or {}).get("status", {}).get("conditions")

    def _exists(self, ref: ObjectRef) -> bool:
        return self._stored(ref) is not None


@dataclass
class CountingCache(CountingCluster):
    """``CountingCluster`` in front of the informer, with its index (reads of memory: not API
    calls, so not counted)."""

    inner: Informer

    def changes(
        self,
        api_version: str,
        kind: str,
        field: str,
        value: str,
        since: Cursor | None,
        *,
        blocks: bool = False,
    ) -> Delta:
        return self.inner.changes(api_version, kind, field, value, since, blocks=blocks)


@dataclass
class CountingWatch(CountingCluster):
    """``CountingCluster`` for what an informer watches: its list and its watch polls too."""

    inner: Watched

    @property
    def cursor(self) -> int:
        return self.inner.cursor

    def changes_since(self, cursor: int) -> tuple[int, Sequence[Change]]:
        self.calls["watch"] += 1
        return self.inner.changes_since(cursor)

    def list_at(self, api_version: str, kind: str) -> tuple[int, Sequence[Manifest]]:
        self.calls["list"] += 1
        return self.inner.list_at(api_version, kind)

    def digest_at(self, api_version: str, kind: str) -> tuple[int, Digest]:
        self.calls["digest"] += 1
        return self.inner.digest_at(api_version, kind)


def one_lifecycle(sim: Sim) -> None:
    """Play one lifecycle of the Experiment ``sim`` has just applied, until nothing is left."""
    sim.settle()
    assert sim.raise_budget(1)
    sim.settle()
    assert len(sim.trials()) == 3
    assert not sim.delete_experiment(), "a lifecycle left objects behind"


@dataclass
class Counts:
    """What ``count`` lifecycles cost, in all."""

    api: Counter[str]
    """Every API call of the runtime, behind its watch-fed cache: the controller's (its
    Trials' reconciles included) and the suggestion services' (reads, watch polls, writes,
    Events); Kubernetes' own simulated controllers write to the API server directly."""
    controller: Counter[str]
    """The controller's own calls (its writes, their no-ops and condition changes)."""
    reconciles: int


def lifecycles(root: Path, count: int) -> Counts:
    """``count`` lifecycles, one after the other, on one embedded runtime (one fake cluster,
    node and controller process, as a state directory keeps them between commands): each
    applies the same Experiment again once the last one is gone."""
    sim = Sim(root, "FromVolume", max_trials=2, parallel=1, seed=1)
    store, runtime = sim.cluster.api.store, sim.runtime
    api = CountingWatch(runtime.informer.inner, store)
    runtime.informer.inner = api
    assert runtime.controller.cluster is runtime.informer
    controller = CountingCache(runtime.informer, store)
    runtime.controller.cluster = controller
    for index in range(count):
        if index:
            sim.apply_example()
        one_lifecycle(sim)
    return Counts(api.calls, controller.calls, runtime.controller.stats.reconciles)


@dataclass
class Syncs:
    """How many ``os.fsync`` calls were made and the seconds spent in them."""

    count: int = 0
    seconds: float = 0.0


@contextlib.contextmanager
def timed_fsync() -> Iterator[Syncs]:
    """Count and time every ``os.fsync`` while the block runs (the call itself is unchanged)."""
    syncs, real = Syncs(), os.fsync

    def fsync(fd: FileDescriptorLike) -> None:
        start = time.perf_counter()
        try:
            real(fd)
        finally:
            syncs.count += 1
            syncs.seconds += time.perf_counter() - start

    os.fsync = fsync
    try:
        yield syncs
    finally:
        os.fsync = real


def run(count: int) -> dict[str, Any]:
    """Figures for ``count`` lifecycles; peak memory is measured on a separate, traced run of
    a tenth of them (tracing slows Python down several times)."""
    with timed_fsync() as syncs, tempfile.TemporaryDirectory() as root:
        start, cpu = time.perf_counter(), time.process_time()
        counts = lifecycles(Path(root), count)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        # the benchmark's own temporary tree goes untimed
    tracemalloc.start()
    with tempfile.TemporaryDirectory() as root:
        lifecycles(Path(root), max(1, count // 10))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    api, ours = counts.api, counts.controller

    def per(total: int) -> float:
        return round(total / count, 1)

    return {
        "lifecycles": count,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),  # this process's CPU: the wall time less the disk and neighbours
        "fsync_s": round(syncs.seconds, 2),
        "fsyncs_per_lifecycle": per(syncs.count),
        "reconciles_per_lifecycle": per(counts.reconciles),
        "reads_per_lifecycle": per(sum(api[name] for name in READS)),
        "digests_per_lifecycle": per(api["digest"]),  # a relist's per kind: no object read
        "watch_polls_per_lifecycle": per(api["watch"]),
        "writes_per_lifecycle": per(_writes(ours)),
        "runtime_writes_per_lifecycle": per(_writes(api)),
        "status_writes_per_lifecycle": per(ours["update_status"]),
        "condition_writes_per_lifecycle": {
            kind: per(ours[f"conditions:{kind}"]) for kind in ("Experiment", "Suggestion")
        },
        "noop_writes": api["noop"],  # every write, the controller's included
        "peak_memory_mib": round(peak / 2**20, 1),
    }


def _writes(calls: Counter[str]) -> int:
    skip = (*READS, "digest", "noop", "event", "watch")
    return sum(v for k, v in calls.items() if k not in skip and not k.startswith("conditions:"))
