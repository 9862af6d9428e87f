"""``pbt``'s cost per call and per resume as the history grows, beside Optuna's.

Ours: a ``SuggestionServer`` running ``pbt`` (population 20, Branin's two parameters) on a volume,
driven to ``n`` = 100 / 1,000 / 10,000 assignments with every result known. *Per call*: one
``GetSuggestions`` of one new assignment (it saves the state file, labels the assignment and
makes its checkpoint directory). *Resume*: a new server restoring its state file and answering
the next ``GetSuggestions``. Optuna has no PBT; the peer is its ``RandomSampler``, which keeps
no model either, on SQLite, durable as our state file is: *per call* one ``ask`` + ``tell``,
*resume* ``load_study`` and the first ``ask`` + ``tell``. Medians of a few repeats, and ratios.

Run: ``python -m benchmarks.pbt [--quick]``; prints JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import optuna

from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.core.model import Experiment, Manifest

optuna.logging.set_verbosity(optuna.logging.ERROR)
warnings.simplefilter("ignore")
BOUNDS = {"x": (-5.0, 10.0), "y": (0.0, 15.0)}


def experiment() -> Experiment:
    settings = {
        "suggestion_trial_dir": "/ckpt",
        "n_population": "20",
        "truncation_threshold": "0.2",
    }
    spec = {
        "algorithm": {
            "algorithmName": "pbt",
            "algorithmSettings": [{"name": k, "value": v} for k, v in settings.items()],
        },
        "objective": {"type": "minimize", "objectiveMetricName": "loss"},
        "parameters": [
            {"name": k, "parameterType": "double", "feasibleSpace": {"min": str(a), "max": str(b)}}
            for k, (a, b) in BOUNDS.items()
        ],
    }
    return Experiment.model_validate(
        {"metadata": {"name": "b", "namespace": "bench"}, "spec": spec}
    )


def loss(item: Manifest) -> float:
    values = {v["name"]: float(v["value"]) for v in item["parameterAssignments"]}
    return (values["x"] - 2.5) ** 2 + (values["y"] - 7.5) ** 2


def grown(server: SuggestionServer, n: int) -> tuple[list[Manifest], dict[str, float | None]]:
    """The server driven to ``n`` assignments in batches of 100, every result reported."""
    held: list[Manifest] = []
    results: dict[str, float | None] = {}
    while len(held) < n:
        held += server.get_suggestions(held, min(n, len(held) + 100), results)
        results.update((item["name"], loss(item)) for item in held)
    return held, results


def ours(n: int, repeats: int) -> tuple[float, float]:
    """(per call, resume) in seconds."""
    subject = experiment()
    with tempfile.TemporaryDirectory() as directory:
        volume = Path(directory)
        server = SuggestionServer(subject, 0, volume)
        server.start([])
        held, results = grown(server, n)
        calls, resumes = [], []
        for _ in range(repeats):
            started = time.perf_counter()
            held += server.get_suggestions(held, len(held) + 1, results)
            calls.append(time.perf_counter() - started)
            results[held[-1]["name"]] = loss(held[-1])
        server.stop()
        for _ in range(repeats):
            started = time.perf_counter()
            restarted = SuggestionServer(subject, 0, volume)
            assert restarted.start(held).source == "restored"
            held += restarted.get_suggestions(held, len(held) + 1, results)
            resumes.append(time.perf_counter() - started)
            results[held[-1]["name"]] = loss(held[-1])  # the next restart issues a new one
            restarted.stop()
    return statistics.median(calls), statistics.median(resumes)


def optunas(n: int, repeats: int) -> tuple[float, float]:
    """(per call, resume) of a RandomSampler study on SQLite (durable, as ours is)."""
    space: dict[str, optuna.distributions.BaseDistribution] = {
        k: optuna.distributions.FloatDistribution(a, b) for k, (a, b) in BOUNDS.items()
    }
    memory = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(n):
        trial = memory.ask(space)
        memory.tell(trial, (trial.params["x"] - 2.5) ** 2 + (trial.params["y"] - 7.5) ** 2)
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite:///{directory}/study.db"
        optuna.create_study(storage=url, study_name="b").add_trials(memory.trials)
        resumes, calls = [], []
        for _ in range(repeats):
            started = time.perf_counter()
            sampler = optuna.samplers.RandomSampler(seed=0)
            study = optuna.load_study(study_name="b", storage=url, sampler=sampler)
            study.tell(study.ask(space), 1.0)
            resumes.append(time.perf_counter() - started)
            started = time.perf_counter()
            study.tell(study.ask(space), 1.0)
            calls.append(time.perf_counter() - started)
    return statistics.median(calls), statistics.median(resumes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 only")
    args = parser.parse_args()
    sizes = (100, 1000) if args.quick else (100, 1000, 10000)
    report: dict[str, Any] = {"optuna": optuna.__version__}
    for n in sizes:
        (call, resume), (peer_call, peer_resume) = ours(n, 5), optunas(n, 5)
        report[str(n)] = {
            "ours_call_s": round(call, 5),
            "optuna_sqlite_call_s": round(peer_call, 5),
            "call_ratio": round(call / peer_call, 2),
            "ours_resume_s": round(resume, 4),
            "optuna_sqlite_resume_s": round(peer_resume, 4),
            "resume_ratio": round(resume / peer_resume, 2),
        }
        print(f"pbt {n}: {report[str(n)]}", file=sys.stderr)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
