"""Trials as real processes on one machine: ``python -m benchmarks.trials``.

The from-volume example run to N trials (``--trials``, default 100 and 1,000) with
``parallelTrialCount`` P (``--parallel``, default 8) and ``--trial-command``, in a state
directory as ``katib-resume run`` runs it, each Trial's command ``sleep S; echo loss=<lr>``
(``--sleep``, default 0.1 s). Printed as one JSON document, per size (the median of
``--repeat`` runs):

- ``wall_s`` against ``serial_s`` (N x S, the trials one after another) and ``ideal_s`` (N x S /
  P): ``speedup`` is serial over wall (at most P), ``efficiency`` ideal over wall;
- ``most_at_once``: the most Trial processes seen running at once (sampled every step);
- ``controller_writes_per_trial``: the controller's writes (Experiments, Suggestions, Trials,
  Jobs), and ``cluster_writes_per_trial``: every write to the cluster, Kubernetes' own
  controllers' (the Job controller's and the kubelet's pods) included;
- the peer in the same run: Optuna running the same command as its objective with
  ``n_jobs=P`` threads, on SQLite storage as durable as ours (``optuna_wall_s``; ``to_optuna``
  is our wall over its) and in memory (``optuna_memory_wall_s``, ``to_optuna_memory``).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import optuna
import yaml

from katib_resume.app.cli.run import create, run_to_completion
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.options import Options
from katib_resume.core.model import Experiment

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "from-volume-resume.yaml"


def experiment(trials: int, parallel: int, sleep: float) -> Experiment:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["spec"].update(
        maxTrialCount=trials, parallelTrialCount=parallel, maxFailedTrialCount=trials
    )
    job = manifest["spec"]["trialTemplate"]["trialSpec"]["spec"]
    script = f"sleep {sleep:g}; echo loss=${{trialParameters.learningRate}}"
    job["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", script]
    return Experiment.model_validate(manifest)


def ours(state: Path, trials: int, parallel: int, sleep: float) -> dict[str, float]:
    """One ``run -f ... --trial-command`` in process: wall seconds, peak processes, writes."""
    peak = [0]
    start = time.perf_counter()
    with session(Options(state, trial_command=True)) as runtime:
        version = runtime.cluster.store.version
        ref = create(runtime, experiment(trials, parallel, sleep), None, 1)

        def sample() -> None:
            peak[0] = max(peak[0], runtime.busy)

        run_to_completion(runtime, ref, sample)
        writes = runtime.controller.stats.writes
        cluster_writes = runtime.cluster.store.version - version
    wall = time.perf_counter() - start
    return {
        "wall_s": wall,
        "most_at_once": peak[0],
        "controller_writes_per_trial": writes / trials,
        "cluster_writes_per_trial": cluster_writes / trials,
    }


def optuna_wall(root: Path | None, trials: int, parallel: int, sleep: float) -> float:
    """Optuna running the same command as its objective, ``n_jobs`` threads, on SQLite in
    ``root`` (``None``: in memory)."""

    def objective(trial: optuna.Trial) -> float:
        lr = trial.suggest_float("lr", 0.01, 0.05)
        done = subprocess.run(
            ["sh", "-c", f"sleep {sleep:g}; echo loss={lr}"],
            capture_output=True,
            text=True,
            check=True,
        )
        return float(done.stdout.strip().partition("=")[2])

    storage = None if root is None else f"sqlite:///{root / 'optuna.db'}"
    study = optuna.create_study(storage=storage, sampler=optuna.samplers.RandomSampler(seed=1))
    start = time.perf_counter()
    study.optimize(objective, n_trials=trials, n_jobs=parallel)
    return time.perf_counter() - start


def one_size(trials: int, parallel: int, sleep: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="katib-trials-bench-") as root:
        figures: dict[str, Any] = ours(Path(root) / "state", trials, parallel, sleep)
        figures["optuna_wall_s"] = optuna_wall(Path(root), trials, parallel, sleep)
        figures["optuna_memory_wall_s"] = optuna_wall(None, trials, parallel, sleep)
    serial = trials * sleep
    wall = figures["wall_s"]
    figures.update(
        trials=trials,
        serial_s=serial,
        ideal_s=serial / parallel,
        speedup=serial / wall,
        efficiency=serial / parallel / wall,
        to_optuna=wall / figures["optuna_wall_s"],
        to_optuna_memory=wall / figures["optuna_memory_wall_s"],
    )
    return figures


def medians(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {key: round(statistics.median(run[key] for run in runs), 3) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, nargs="*", default=[100, 1_000], help="sizes")
    parser.add_argument("--parallel", type=int, default=8, help="parallelTrialCount")
    parser.add_argument("--sleep", type=float, default=0.1, help="seconds each trial sleeps")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; medians reported")
    args = parser.parse_args()
    logging.getLogger("katib_resume").setLevel(logging.ERROR)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sizes = [
        medians([one_size(n, args.parallel, args.sleep) for _ in range(max(1, args.repeat))])
        for n in args.trials
    ]
    print(json.dumps({"parallel": args.parallel, "sleep_s": args.sleep, "sizes": sizes}, indent=1))


if __name__ == "__main__":
    main()
