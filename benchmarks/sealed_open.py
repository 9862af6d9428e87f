"""The open of a state directory with its settled Trials sealed into blocks, against the same
state unsealed: ``python -m benchmarks.sealed_open STATE [--repeat N]``.

A writer holds a block of sealed Trials as its row until something needs a member
(``adapters/fake/sealed.py``), so opening a state should cost what its objects in no block and
its blocks' rows cost, not its history. Each run spends copies of ``STATE`` (a state directory
``benchmarks.embedded --state-cache`` grew, say ``restart-5000``), never ``STATE`` itself: one
copy opened as it is (upgraded to this build's format once, outside the figures), one whose
settled Trials (``app.embedded.settled``: finished, finalizer in place, owning nothing) were
sealed into one block per Experiment by ``Store.seal``. Prints one JSON document: the medians
of ``--repeat`` opens of each (``persistence.load``; ms of CPU, ``time.process_time``, and of
the clock), and what reading the block later costs (a list of every Trial after the open).
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from katib_resume.adapters.fake import FakeCluster, persistence
from katib_resume.adapters.fake.store import Key, key_of
from katib_resume.app.embedded.settled import settled
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT


def sealed(state: Path) -> int:
    """Seal ``state``'s settled Trials, one block per Experiment; how many were sealed."""
    cluster, world = persistence.load(state)
    store = cluster.store
    groups: dict[tuple[str, str], list[Key]] = {}
    for trial in store.of_kind(API_VERSION, "Trial"):
        meta = trial["metadata"]
        if settled(trial) and not store.owners.dependents.get(meta["uid"]):
            experiment = (meta.get("labels") or {}).get(LABEL_EXPERIMENT, "")
            groups.setdefault((meta["namespace"], experiment), []).append(
                key_of(ObjectRef.of(trial))
            )
    for keys in groups.values():
        store.seal(keys, "")
    persistence.close(world)
    return sum(map(len, groups.values()))


def opened(state: Path, then: Callable[[FakeCluster], Any] | None = None) -> tuple[float, float]:
    """Ms of CPU and of the clock to open a copy of ``state`` (or, with ``then``, to do
    ``then`` to the cluster just opened)."""
    with tempfile.TemporaryDirectory() as directory:
        copy = Path(directory) / "state"
        shutil.copytree(state, copy, ignore=shutil.ignore_patterns(".lock"))
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        cluster, world = persistence.load(copy)
        if then is not None:
            start, cpu = time.perf_counter(), time.process_time()
            then(cluster)
        cpu, clock = time.process_time() - cpu, time.perf_counter() - start
        persistence.close(world)
    return cpu * 1000, clock * 1000


def _every_trial(cluster: FakeCluster) -> None:
    cluster.for_cache().list(API_VERSION, "Trial", None, {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("state", type=Path)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        plain, blocks = Path(directory) / "plain", Path(directory) / "sealed"
        for copy in (plain, blocks):
            shutil.copytree(args.state, copy, ignore=shutil.ignore_patterns(".lock"))
        persistence.close(persistence.load(plain)[1])  # upgraded once, outside the figures
        count = sealed(blocks)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in _FIGURES}
        for _ in range(args.repeat):  # in turn, so that the machine's moods fall on each alike
            for name, (state, then) in _FIGURES.items():
                runs[name].append(opened(plain if state == "plain" else blocks, then))
    medians = {
        name: {
            "cpu_ms": round(statistics.median(cpu for cpu, _ in got), 2),
            "clock_ms": round(statistics.median(clock for _, clock in got), 2),
        }
        for name, got in runs.items()
    }
    print(json.dumps({"state": str(args.state), "sealed_trials": count, **medians}, indent=2))


_FIGURES: dict[str, tuple[str, Callable[[FakeCluster], Any] | None]] = {
    "open_unsealed": ("plain", None),
    "open_sealed": ("sealed", None),
    "every_trial_after_unsealed_open": ("plain", _every_trial),
    "every_trial_after_sealed_open": ("sealed", _every_trial),
}


if __name__ == "__main__":
    main()
