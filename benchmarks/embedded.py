"""The embedded runtime on its SQLite store, as history grows: ``python -m benchmarks.embedded``.

Figures (printed as one JSON document; sizes are flags, so the big ones run here, never in tests;
``--repeat N`` runs every size N times and reports each figure's median, with every section's
growth over its smallest size as ``*_ratio``; ``--state-cache DIR`` keeps the restart section's
grown states in DIR and spends a copy of each on every run, for iterating on the restart: by
default every state is grown in the run, by the code measured):

- ``one_experiment``: the from-volume example run to N trials in one ``run``: seconds, time per
  trial (of the clock and of the CPU) and state bytes per trial, and each size's ratio to the
  smallest;
- ``restart``: from a state directory holding N completed trials, the budget raised by one
  (``edit``), the time from opening the state to the first new assignment (in process: load,
  informer list, the suggestion service's restore, reconciles), beside Optuna's ``load_study``
  and first ``ask`` on SQLite holding the same N trials (random sampler, as the Experiment's
  ``random`` algorithm), in the same run, each in seconds of the clock and of the process's CPU
  (``*_cpu_s``: on a machine other processes load, the clock counts their time too); the
  one-field ``edit`` itself, the whole command in process; and the same restart, ``edit`` and
  Optuna's restart each as a process of its own (``process_*``, ``edit_process_*``,
  ``optuna_process_*``: the interpreter's start and the imports included, with the peak memory;
  ``benchmarks.restart_process``);
- ``status_write``: one status write of a Suggestion holding N assignments that adds one more,
  on the SQLite store through the informer's view of the fake API server (no copies, as in the
  runtime): the median of 50, in ms, and its growth (the goal: the cost of what changed); and
  an Experiment naming N succeeded Trials, three Trials started and then finished per two
  status writes (``experiment_*``: CPU ms and bytes of splices stored per write, averaged over
  100 writes, every new chain included);
- ``experiments``: E completed Experiments in one runtime: one steady reconcile (median), a full
  resync (every Experiment reconciled once) and the memory each Experiment adds (everything the
  runtime holds, traced by ``tracemalloc`` while it is built, over E).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import io
import json
import logging
import random
import shutil
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from benchmarks import restart_process
from benchmarks.optuna_peer import optuna_resume, optuna_study
from benchmarks.restart_process import NAME, NS
from katib_resume.adapters.fake import load
from katib_resume.adapters.fake.persistence import STATE_FILE
from katib_resume.app.cli.main import main as cli
from katib_resume.app.cli.run import create, run_to_completion
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.driver import settle
from katib_resume.app.embedded.options import Options
from katib_resume.app.embedded.runtime import Runtime
from katib_resume.app.loop.keys import Key
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.model import Experiment

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "from-volume-resume.yaml"


def experiment(trials: int, name: str = NAME, **spec: Any) -> Experiment:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["metadata"]["name"] = name
    manifest["spec"].update(maxTrialCount=trials, **spec)
    return Experiment.model_validate(manifest)


def state_bytes(state: Path) -> int:
    return sum(p.stat().st_size for p in state.glob(f"{STATE_FILE}*"))


def grow(state: Path, trials: int) -> tuple[float, float]:
    """Run the example to ``trials`` in ``state``; the seconds it took, of the clock and of this
    process's CPU."""
    start, cpu = time.perf_counter(), time.process_time()
    with session(Options(state)) as runtime:
        ref = create(runtime, experiment(trials), None, 1)
        run_to_completion(runtime, ref)
    return time.perf_counter() - start, time.process_time() - cpu


def one_experiment(sizes: Sequence[int], root: Path) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        state = root / f"one-{n}"
        seconds, cpu = grow(state, n)
        size = state_bytes(state)
        rows.append(
            {
                "trials": n,
                "seconds": round(seconds, 2),
                "ms_per_trial": seconds / n * 1e3,
                "cpu_ms_per_trial": cpu / n * 1e3,
                "state_bytes": size,
                "bytes_per_trial": size / n,
            }
        )
    return rows


def _assignments(runtime: Runtime) -> int:
    """The assignments the Suggestion holds, read in place (a ``get`` would copy all of them
    after every step, a cost of the probe and not of the restart)."""
    stored = runtime.cluster.store.find(ObjectRef(API_VERSION, "Suggestion", NS, NAME)) or {}
    return len((stored.get("status") or {}).get("suggestions") or [])


def first_new_assignment(state: Path, n: int) -> tuple[float, float]:
    """Open the state and step until the Suggestion holds assignment ``n + 1``; seconds, of
    the clock and of this process's CPU (what a loaded machine's other processes do not add)."""
    start, cpu = time.perf_counter(), time.process_time()
    with session(Options(state, focus=frozenset({(NS, NAME)}))) as runtime:
        settle(
            runtime, lambda: _assignments(runtime) > n, "the first new assignment", max_steps=1_000
        )
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return seconds, cpu


def edit(state: Path, budget: int) -> float:
    """One ``katib-resume edit`` of one field, the whole command in process; seconds."""
    argv = [
        "edit",
        "experiment",
        NAME,
        "-n",
        NS,
        "--max-trial-count",
        str(budget),
        "--state-dir",
        str(state),
    ]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli(argv)
    assert code == 0, f"edit failed with {code}"
    return time.perf_counter() - start


def optuna_restart(storage: str) -> tuple[float, float]:
    """``optuna_resume`` in this process; seconds of the clock and of CPU."""
    start, cpu = time.perf_counter(), time.process_time()
    optuna_resume(storage)
    return time.perf_counter() - start, time.process_time() - cpu


def built(n: int, root: Path, grown: dict[int, Path], cache: Path | None) -> Path:
    """A state directory of ``n`` completed trials for the restart section to spend.

    Grown here unless the one-experiment section grew it; with ``--state-cache`` the first one
    grown is kept there and every run spends a copy of it (the edit and the restart write)."""
    if n in grown:
        return grown[n]
    state = root / f"restart-{n}"
    if cache is None:
        grow(state, n)
        return state
    kept = cache / f"restart-{n}"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"restart-{n}.lock", "w") as lock:  # two runs sharing the cache
        fcntl.flock(lock, fcntl.LOCK_EX)  # (one growing while the other copies: a torn copy)
        if not (kept / ".grown").exists():  # written last: a half-grown state is grown again
            shutil.rmtree(kept, ignore_errors=True)
            grow(kept, n)
            (kept / ".grown").touch()
        shutil.copytree(kept, state, ignore=shutil.ignore_patterns(".lock", ".grown"))
    return state


def restart(
    sizes: Sequence[int], root: Path, grown: dict[int, Path], cache: Path | None = None
) -> list[dict[str, Any]]:
    warm_up(root)
    rows = []
    for n in sizes:
        state = built(n, root, grown, cache)
        edit_s = edit(state, n + 1)
        spare = state.with_name(f"{state.name}-process")
        shutil.copytree(state, spare, ignore=shutil.ignore_patterns(".lock"))
        edit_process = restart_process.timed("edit", str(spare), str(n + 2))
        process = restart_process.timed("ours", str(spare), str(n))
        ours, our_cpu = first_new_assignment(state, n)
        storage = optuna_study(n, root)
        their_process = restart_process.timed("optuna", storage)
        theirs, their_cpu = optuna_restart(storage)  # one trial more than the process saw
        rows.append(
            {
                "trials": n,
                "first_assignment_s": ours,
                "optuna_s": theirs,
                "to_optuna": ours / theirs,
                "first_assignment_cpu_s": our_cpu,
                "optuna_cpu_s": their_cpu,
                "to_optuna_cpu": our_cpu / their_cpu,
                "edit_s": edit_s,
                "process_s": process["s"],
                "process_cpu_s": process["cpu_s"],
                "process_peak_mib": process["peak_mib"],
                "optuna_process_s": their_process["s"],
                "optuna_process_peak_mib": their_process["peak_mib"],
                "process_to_optuna": process["s"] / their_process["s"],
                "edit_process_s": edit_process["s"],
                "edit_process_peak_mib": edit_process["peak_mib"],
            }
        )
    return rows


def warm_up(root: Path) -> None:
    """One process of each kind, untimed, so that every timed one reads its modules' bytecode
    (the first would compile them), as every run but a checkout's first does."""
    restart_process.timed("optuna", optuna_study(1, root))
    warm = root / "warm-up"
    grow(warm, 3)  # the example's parallelTrialCount
    restart_process.timed("edit", str(warm), "4")
    restart_process.timed("ours", str(warm), "3")


def _assignment(i: int) -> dict[str, Any]:
    values = {"lr": 0.01 + i / 1e6, "momentum": 0.5 + i / 1e7}
    return {
        "name": f"{NAME}-{i:08d}",
        "parameterAssignments": [{"name": k, "value": str(v)} for k, v in values.items()],
    }


def status_write(sizes: Sequence[int], root: Path) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        (root / f"writes-{n}").mkdir()
        cluster, _ = load(root / f"writes-{n}")
        view, ref = cluster.for_cache(), ObjectRef(API_VERSION, "Suggestion", NS, NAME)
        meta = {"name": NAME, "namespace": NS}
        view.create({"apiVersion": API_VERSION, "kind": "Suggestion", "metadata": meta, "spec": {}})
        have = [_assignment(i) for i in range(n)]
        samples = []
        for i in range(n, n + 51):
            start = time.perf_counter()
            stored = view.update_status(ref, {"suggestions": have, "suggestionCount": i}, None)
            samples.append(time.perf_counter() - start)
            have = stored["status"]["suggestions"] + [_assignment(i)]
        journal = cluster.store.journal
        if journal is not None:
            journal.close()
        row = {"assignments": n, "ms_per_write": statistics.median(samples[1:]) * 1e3}
        rows.append(row | experiment_writes(n, root / f"experiment-writes-{n}"))
    return rows


def experiment_writes(n: int, state: Path) -> dict[str, float]:
    """Status writes of an Experiment that names ``n`` succeeded Trials, as the controller
    writes them for the example (three Trials at a time): three names in ``runningTrialList``,
    then the three moved into the sorted ``succeededTrialList``, wherever their random names
    land. CPU ms and bytes of splices stored per write, averaged over 100 writes after 100
    (every new chain's whole copy included: ``adapters/fake/splices.py``)."""
    state.mkdir()
    cluster, _ = load(state)
    view, ref = cluster.for_cache(), ObjectRef(API_VERSION, "Experiment", NS, NAME)
    meta = {"name": NAME, "namespace": NS}
    view.create({"apiVersion": API_VERSION, "kind": "Experiment", "metadata": meta, "spec": {}})
    draw = random.Random(n)
    names = [f"{NAME}-{draw.getrandbits(40):010x}" for _ in range(n + 300)]
    stored = view.update_status(ref, {"succeededTrialList": sorted(names[:n])}, None)
    journal = cluster.store.journal
    assert journal is not None
    journal.db.execute("CREATE TEMP TABLE stored (bytes INTEGER)")
    journal.db.execute("INSERT INTO stored VALUES (0)")
    journal.db.execute(
        "CREATE TEMP TRIGGER counted AFTER INSERT ON main.items "
        "BEGIN UPDATE stored SET bytes = bytes + length(new.body); END"
    )
    cpu = 0.0
    for batch in range(100):
        if batch == 50:
            journal.db.execute("UPDATE stored SET bytes = 0")
            cpu = 0.0
        running = sorted(names[n + 3 * batch : n + 3 * batch + 3])
        status = stored["status"]
        writes = (
            {**status, "runningTrialList": running},
            {"succeededTrialList": sorted([*status["succeededTrialList"], *running])},
        )
        for written in writes:
            start = time.process_time()
            stored = view.update_status(ref, written, None)
            cpu += time.process_time() - start
    (stored_bytes,) = journal.db.execute("SELECT bytes FROM stored").fetchone()
    journal.close()
    return {
        "experiment_cpu_ms_per_write": cpu / 100 * 1e3,
        "experiment_bytes_per_write": stored_bytes / 100,
    }


def experiments(sizes: Sequence[int], root: Path) -> list[dict[str, Any]]:
    rows = []
    for count in sizes:
        tracemalloc.start()
        with session(Options(root / f"many-{count}")) as runtime:
            for i in range(count):
                create(
                    runtime,
                    experiment(1, f"e{i}", parallelTrialCount=1, maxFailedTrialCount=1),
                    None,
                    1,
                )
            settle(runtime, lambda: _all_completed(runtime), "every Experiment to complete")
            grown = tracemalloc.get_traced_memory()[0] / 1024
            tracemalloc.stop()
            rows.append(
                {
                    "experiments": count,
                    **_reconciles(runtime, count),
                    "kb_per_experiment": grown / count,
                }
            )
    return rows


def _all_completed(runtime: Runtime) -> bool:
    listed = runtime.cluster.list(API_VERSION, "Experiment", NS, {})
    return all(Experiment.model_validate(e).is_completed() for e in listed)


def _reconciles(runtime: Runtime, count: int) -> dict[str, float]:
    """A steady reconcile (the median of up to 200 keys) and a full resync, in ms and s (the
    resync in seconds of this process's CPU too: a loaded machine's clock counts the others)."""
    controller, samples = runtime.controller, []
    for i in range(0, count, max(1, count // 200)):
        controller.enqueue(Key(NS, f"e{i}"))
        start = time.perf_counter()
        controller.step()
        samples.append(time.perf_counter() - start)
    start, cpu = time.perf_counter(), time.process_time()
    runtime.enqueue_all()
    runtime.drain()
    resync, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {
        "steady_reconcile_ms": statistics.median(samples) * 1e3,
        "full_resync_s": resync,
        "full_resync_cpu_s": cpu,
    }


RATIOS = {
    "one_experiment": ("ms_per_trial", "cpu_ms_per_trial", "bytes_per_trial"),
    "restart": (
        "first_assignment_s",
        "first_assignment_cpu_s",
        "edit_s",
        "to_optuna",
        "process_s",
        "process_cpu_s",
        "edit_process_s",
        "process_to_optuna",
    ),
    "status_write": ("ms_per_write", "experiment_cpu_ms_per_write", "experiment_bytes_per_write"),
    "experiments": (
        "steady_reconcile_ms",
        "full_resync_s",
        "full_resync_cpu_s",
        "kb_per_experiment",
    ),
}
"""The figures of each section reported as growth over its smallest size too."""


def medians(runs: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Row by row (one row per size), the median of each figure over the runs."""
    return [
        {key: statistics.median(row[key] for row in rows) for key in rows[0]}
        for rows in zip(*runs, strict=True)
    ]


def _ratios(rows: list[dict[str, Any]], fields: Sequence[str]) -> list[dict[str, Any]]:
    """Each row's ``field`` over the smallest size's: growth, side by side."""
    for row in rows:
        for name in fields:
            row[f"{name}_ratio"] = row[name] / rows[0][name] if rows[0][name] else None
    return rows


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="katib-embedded-bench-") as root:
        yield Path(root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sizes = {
        "trials": [100, 1_000, 10_000],
        "restarts": [100, 1_000, 5_000],
        "status_writes": [100, 1_000, 10_000],  # ``--status-writes``
        "experiments": [100, 1_000, 10_000],
    }
    for name, default in sizes.items():
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            type=int,
            nargs="*",
            default=default,
            help=f"sizes (default {default})",
        )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of every size; each figure is their median"
    )
    parser.add_argument(
        "--state-cache",
        type=Path,
        default=None,
        help="keep the restart section's grown state directories here and spend copies of them"
        " (for iterating; delete it when the store's format, the summaries' content or the"
        " suggestion state's format changes: a state grown by older code restarts without what"
        " newer code keeps, or upgrades it on the way)",
    )
    args = parser.parse_args()
    logging.getLogger("katib_resume").setLevel(logging.ERROR)
    runs: dict[str, list[list[dict[str, Any]]]] = {section: [] for section in RATIOS}
    for _ in range(max(1, args.repeat)):
        with scratch() as root:
            runs["one_experiment"].append(one_experiment(args.trials, root))
            grown = {n: root / f"one-{n}" for n in args.trials}
            runs["restart"].append(restart(args.restarts, root, grown, args.state_cache))
            runs["status_write"].append(status_write(args.status_writes, root))
            runs["experiments"].append(experiments(args.experiments, root))
    figures: dict[str, Any] = {"runs": max(1, args.repeat)}
    for section, fields in RATIOS.items():
        figures[section] = _ratios(medians(runs[section]), fields) if runs[section][0] else []
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
