"""What a restart costs for the algorithms without a model: ``random``, ``grid``, ``hyperband``
and ``pbt``, at 100 / 1,000 / 5,000 assignments.

A ``SuggestionServer`` on a volume is driven to ``n`` assignments in batches of up to 100, every
result reported (hyperband and PBT wait for them), then restarted: a new server reads its state
(snapshot and journal), checks it against the history and answers the next ``GetSuggestions``
(one assignment, saved). ``read`` is the state's reading alone (given the history, as the
server reads it). ``python_calls``: the Python function calls of one more restart (counted,
not timed: ``python_calls``). These algorithms keep no model:
a restart is the state read and checked, and the next point drawn. Optuna has no grid,
hyperband or PBT of Katib's; ``benchmarks.pbt`` puts PBT beside Optuna's ``RandomSampler`` on
SQLite.

Spaces: Branin's two doubles (a 101 x 101 grid for ``grid``), and for ``hyperband`` an
``epochs`` resource (``r_l`` 2,187, ``eta`` 3: 5,354 assignments in all). CPU and wall medians.
"""

from __future__ import annotations

import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.algorithms_resume import CLOCKS, _medians, _now, _record
from benchmarks.python_calls import counted
from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer, state_store
from katib_resume.core.model import Experiment, Manifest

MODEL_FREE = ("random", "grid", "hyperband", "pbt")
STEP = "0.15"


def subject(algorithm: str) -> Experiment:
    """Branin's space, with what each algorithm needs."""
    space = [("x0", "-5", "10"), ("x1", "0", "15")]
    parameters: list[dict[str, Any]] = [
        {"name": n, "parameterType": "double", "feasibleSpace": {"min": a, "max": b}}
        for n, a, b in space
    ]
    settings: dict[str, str] = {}
    spec: dict[str, Any] = {"objective": {"type": "minimize", "objectiveMetricName": "f"}}
    if algorithm == "grid":
        for parameter in parameters:
            parameter["feasibleSpace"]["step"] = STEP
    elif algorithm == "hyperband":
        settings = {"r_l": "2187", "eta": "3", "resource_name": "epochs"}
        epochs = {"min": "1", "max": "2187"}
        parameters.append({"name": "epochs", "parameterType": "int", "feasibleSpace": epochs})
        spec["parallelTrialCount"] = 2187
    elif algorithm == "pbt":
        settings = {"suggestion_trial_dir": "/ckpt", "n_population": "20"}
        settings["truncation_threshold"] = "0.2"
    spec["algorithm"] = {
        "algorithmName": algorithm,
        "algorithmSettings": [{"name": k, "value": v} for k, v in settings.items()],
    }
    spec["parameters"] = parameters
    return Experiment.model_validate(
        {"metadata": {"name": "b", "namespace": "bench"}, "spec": spec}
    )


def value(item: Manifest) -> float:
    values = {v["name"]: float(v["value"]) for v in item["parameterAssignments"]}
    return (values["x0"] - 2.5) ** 2 + (values["x1"] - 7.5) ** 2


def grown(server: SuggestionServer, n: int) -> tuple[list[Manifest], dict[str, float | None]]:
    held: list[Manifest] = []
    results: dict[str, float | None] = {}
    while len(held) < n:
        batch = server.get_suggestions(held, min(n, len(held) + 100), results)
        assert batch, "the search stalled"
        held += batch
        results.update((item["name"], value(item)) for item in batch)
    return held, results


def restart(algorithm: str, n: int, repeats: int) -> dict[str, Any]:
    times: dict[str, dict[str, list[float]]] = {
        part: {clock: [] for clock in CLOCKS} for part in ("restart", "read")
    }
    experiment = subject(algorithm)
    with tempfile.TemporaryDirectory() as directory:
        volume = Path(directory)
        server = SuggestionServer(experiment, 0, volume)
        server.start([])
        held, results = grown(server, n)
        server.stop()
        for _ in range(repeats):
            started = _now()
            state_store.load(volume / FILE_NAME, held)
            _record(times["read"], started)
            started = _now()
            restarted = SuggestionServer(experiment, 0, volume)
            assert restarted.start(held).source == "restored"
            held += restarted.get_suggestions(held, len(held) + 1, results)
            _record(times["restart"], started)
            results[held[-1]["name"]] = value(held[-1])
            restarted.stop()
        calls, _ = counted(partial(_restarted, experiment, volume, held, results))
    return {**{part: _medians(clocks) for part, clocks in times.items()}, "python_calls": calls}


def _restarted(
    experiment: Experiment, volume: Path, held: list[Manifest], results: dict[str, float | None]
) -> None:
    """A restart as ``restart`` times it, for its Python calls (``python_calls``)."""
    restarted = SuggestionServer(experiment, 0, volume)
    assert restarted.start(held).source == "restored"
    held.extend(restarted.get_suggestions(held, len(held) + 1, results))
    results[held[-1]["name"]] = value(held[-1])
