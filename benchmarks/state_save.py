"""The suggestion state's save and restore, as history grows: ``python -m benchmarks.state_save``.

Figures (one JSON document), for a state of N issued assignments (two doubles each, as Katib's
example) and two cursor shapes: ``random`` (one integer) and ``tpe`` (a result told for every
assignment, as the Optuna-backed searches keep them: a column of doubles by assignment index,
``told_column.py``):

- ``whole_save_ms``: one save of a batch of one as it was before the journal: the whole snapshot
  written atomically (the earlier assignments' encoding reused, as ``encoded.py`` does), the
  median of 20;
- ``append_ms``: the same save now (``state_store.py``), the median of the saves from N/2 to N,
  which append a record; ``save_mean_ms``: their mean, compactions included (the snapshot
  doubles between them, so one or two fall in the run): the amortized cost;
- ``whole_restore_ms``: reading a whole snapshot of the state, every assignment parsed;
  ``restore_ms``: the restore now, from the files the run left, handed the history the
  controller holds as a restart is (``unparsed.py``: the saved assignments are compared with
  it, not parsed; ``journal_ratio``: the journal's size over the snapshot's);
  ``longest_restore_ms``: the same restore with the journal at its longest (a snapshot of N
  and the ``longest_records`` appends that follow it before the next compaction): a restore's
  worst case;
- ``optuna_sqlite_ms``: Optuna's own durable step at N trials beside them, ``ask`` and ``tell``
  of one trial on SQLite (``RandomSampler``), the median of 5.

Each figure is wall-clock and the process's CPU (``*_cpu_ms``; other processes load this
machine); ``*_ratio`` is a size's figure over the smallest size's.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import optuna

from katib_resume.adapters.atomic import write_atomically
from katib_resume.adapters.local.suggestion import state as snapshot
from katib_resume.adapters.local.suggestion.assignments import assignment
from katib_resume.adapters.local.suggestion.column import Column
from katib_resume.adapters.local.suggestion.state import SearchState
from katib_resume.adapters.local.suggestion.state_store import StateStore
from katib_resume.adapters.local.suggestion.told_column import told_with

optuna.logging.set_verbosity(optuna.logging.WARNING)
KINDS = ("random", "tpe")


def grown(kind: str, state: SearchState, rng: random.Random) -> SearchState:
    """``state`` with one assignment more, and the cursor its search would hold after it."""
    index = len(state.issued)
    point = (("lr", repr(rng.uniform(0.01, 0.05))), ("momentum", repr(rng.uniform(0.5, 0.9))))
    issued = (*state.issued, assignment(f"exp-{index:08x}", point))
    if kind == "random":
        return replace(state, cursor=index + 1, issued=issued)
    told = told_with(state.cursor["told"], {index: rng.random()})
    return replace(state, cursor={**state.cursor, "told": told}, issued=issued)


def start(kind: str, n: int, rng: random.Random) -> SearchState:
    optuna = {"told": Column(), "trial_attrs": {}, "study_attrs": {}}
    cursor: Any = 0 if kind == "random" else optuna
    state = SearchState("kubeflow/exp", kind, 1, "space", cursor=cursor)
    for _ in range(n):
        state = grown(kind, state, rng)
    return state


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) milliseconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3


def whole(kind: str, n: int, directory: Path) -> dict[str, float]:
    """The save and the restore as they were: the whole snapshot each time."""
    rng, path = random.Random(n), directory / "whole" / snapshot.FILE_NAME
    state = start(kind, n, rng)
    write_atomically(path, snapshot.encode(state))  # the encoding cache warm, as in a run
    saves = []
    for _ in range(20):
        state = grown(kind, state, rng)
        saves.append(timed(_saving(path, state)))
    restores = [timed(lambda: snapshot.read(path)) for _ in range(5)]
    return {**_medians("whole_save", saves), **_medians("whole_restore", restores)}


def _saving(path: Path, state: SearchState) -> Callable[[], None]:
    return lambda: write_atomically(path, snapshot.encode(state))


def journaled(kind: str, n: int, directory: Path) -> dict[str, float]:
    """The saves from N/2 to N now, and the restore of what they leave."""
    rng, path = random.Random(n), directory / "journal" / snapshot.FILE_NAME
    state, store = start(kind, n // 2, rng), StateStore(path)
    store.save(state)
    saves = []
    while len(state.issued) < n:
        state = grown(kind, state, rng)
        saves.append(timed(lambda: store.save(state)))  # noqa: B023 (called at once)
    history = state.issued  # what the controller holds and a restart is handed
    restores = [timed(lambda: StateStore(path).load(history)) for _ in range(5)]
    journal = store.journal_path.stat().st_size if store.journal_path.exists() else 0
    figures = {**_medians("append", saves), **_medians("restore", restores)}
    figures["save_mean_ms"] = statistics.fmean(wall for wall, _ in saves)
    figures["save_mean_cpu_ms"] = statistics.fmean(cpu for _, cpu in saves)
    return {**figures, "journal_ratio": journal / path.stat().st_size}


def longest(kind: str, n: int, directory: Path) -> dict[str, float]:
    """The restore at ``n`` assignments with the journal at its longest: a snapshot of ``n``,
    then every append before the next compaction (counted on a first pass, made again on a
    second: the same draws), restored as a restart is."""

    def appended(path: Path, saves: int | None) -> tuple[int, SearchState]:
        rng, store = random.Random(n), StateStore(path)
        state = start(kind, n, rng)
        store.save(state)
        made, size = 0, 0
        while saves is None or made < saves:
            state = grown(kind, state, rng)
            store.save(state)
            grown_to = store.journal_path.stat().st_size if store.journal_path.exists() else 0
            if grown_to < size:  # a compaction: the journal was at its longest before it
                break
            made, size = made + 1, grown_to
        return made, state

    records, _ = appended(directory / "count" / snapshot.FILE_NAME, None)
    path = directory / "longest" / snapshot.FILE_NAME
    _, state = appended(path, records)
    history = state.issued
    restores = [timed(lambda: StateStore(path).load(history)) for _ in range(5)]
    return {**_medians("longest_restore", restores), "longest_records": records}


def optuna_step(n: int, directory: Path) -> dict[str, float]:
    """Optuna's durable step at ``n`` trials: ``ask`` and ``tell`` of one on SQLite."""
    space: dict[str, optuna.distributions.BaseDistribution] = {
        "lr": optuna.distributions.FloatDistribution(0.01, 0.05)
    }
    memory = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(n):
        memory.tell(memory.ask(space), random.random())
    url = f"sqlite:///{directory}/study-{n}.db"
    optuna.create_study(storage=url, study_name="b").add_trials(memory.trials)
    study = optuna.load_study(
        study_name="b", storage=url, sampler=optuna.samplers.RandomSampler(seed=0)
    )
    steps = [timed(lambda: study.tell(study.ask(space), 1.0)) for _ in range(5)]
    return _medians("optuna_sqlite", steps)


def _medians(name: str, pairs: list[tuple[float, float]]) -> dict[str, float]:
    return {
        f"{name}_ms": statistics.median(wall for wall, _ in pairs),
        f"{name}_cpu_ms": statistics.median(cpu for _, cpu in pairs),
    }


def _ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    first = dict(rows[0])
    for row in rows:
        for key in [k for k in row if k.endswith("_ms")]:
            row[f"{key[:-3]}_ratio"] = round(row[key] / first[key], 2) if first[key] else None
            row[key] = round(row[key], 3)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000])
    args = parser.parse_args()
    figures: dict[str, Any] = {"optuna": optuna.__version__}
    with tempfile.TemporaryDirectory(prefix="katib-state-bench-") as root:
        peer = {n: optuna_step(n, Path(root)) for n in args.sizes}
        for kind in KINDS:
            rows = []
            for n in args.sizes:
                with tempfile.TemporaryDirectory(dir=root) as scratch:
                    here = Path(scratch)
                    rows.append({"assignments": n, **whole(kind, n, here)})
                    rows[-1].update({**journaled(kind, n, here), **longest(kind, n, here)})
                    rows[-1].update(peer[n])
            figures[kind] = _ratios(rows)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
