"""What a restart of ``cmaes`` and ``sobol`` rebuilds from a history they grew themselves.

``algorithms_resume`` restarts from random points without any sampler attribute, where CMA-ES
has no optimizer to restore and builds the best trial alone (``sampler_reads``). Here our own
server grows the history: batches of 50 assignments and one more, the Branin values of all but
the newest 3 reported before each batch (those 3 still running), so that the state carries CMA-ES's
generations and optimizers and the Sobol position, as a real run's does. On that state the
rebuild of the study (``OptunaSearch._rebuild``) and the first ask (the fit) are timed alone,
and the trials the rebuild built, of all the study's trials, are counted, with the newest
CMA-ES generation; and the whole restart (``restart``: a new server on a copy of the volume,
handed the history as the embedded runtime's stored texts, and its first call, for the
assignment the controller did not record and a new one) with the volume's bytes (``bytes``:
the snapshot and its journal). At 100 / 1,000 / 5,000 assignments; CPU and wall medians.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.algorithms_resume import CLOCKS, _medians, _now, _record, stored
from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.adapters.local.suggestion import state_store as store
from katib_resume.adapters.local.suggestion.algorithms import build
from katib_resume.adapters.local.suggestion.assignments import Index
from katib_resume.adapters.local.suggestion.live_study import WITHHELD
from katib_resume.adapters.local.suggestion.optuna_search import OptunaSearch
from katib_resume.adapters.local.suggestion.state import FILE_NAME
from katib_resume.core.model import Experiment, Manifest

GROWN = ("cmaes", "sobol")
BATCH, RUNNING = 50, 3
Objective = Callable[[dict[str, float]], float]


Results = dict[str, float | None]


def grow(server: SuggestionServer, n: int, f: Objective) -> tuple[list[Manifest], Results]:
    """``n`` assignments asked in batches, and one more: before each call, every result but
    the newest ``RUNNING`` reported. The ``n`` held and the results reported; the last one
    asked is the server's alone (a response the controller did not record)."""
    held: list[Manifest] = []
    results: Results = {}
    while True:
        for item in held[: max(0, len(held) - RUNNING)]:
            if item["name"] not in results:
                results[item["name"]] = f(_values(item))
        if len(held) >= n:
            server.get_suggestions(held, len(held) + 1, results)
            return held, results
        held += server.get_suggestions(held, min(n, len(held) + BATCH), results)


def restart(subject: Experiment, n: int, f: Objective, repeats: int) -> dict[str, Any]:
    times: dict[str, dict[str, list[float]]] = {
        part: {clock: [] for clock in CLOCKS} for part in ("rebuild", "fit", "restart")
    }
    with tempfile.TemporaryDirectory() as directory:
        volume = Path(directory)
        server = SuggestionServer(subject, 0, volume)
        server.start([])
        held, results = grow(server, n, f)
        server.stop()
        state = store.load(volume / FILE_NAME)
        size = sum(path.stat().st_size for path in volume.iterdir())
        for _ in range(repeats):
            _restarted(subject, volume, held, results, times["restart"])
    points = Index.of(state.issued).points  # read when asked for, as the server does
    search = build(subject, 0)
    assert isinstance(search, OptunaSearch)
    for _ in range(repeats):
        started = _now()
        live = search._rebuild(state.cursor, points)
        _record(times["rebuild"], started)
        started = _now()
        search._ask(live, len(live.numbers), live.seen)
        _record(times["fit"], started)
    last = search._rebuild(state.cursor, points)
    trials = last.storage.get_all_trials(last.study_id, deepcopy=False)
    generations = [a.get("cma:generation", -1) for a in state.cursor["trial_attrs"].values()]
    return {
        **{part: _medians(clocks) for part, clocks in times.items()},
        "bytes": size,
        "built": sum(t is not WITHHELD for t in trials),
        "trials": len(trials),
        "generation": max(generations, default=None),
    }


def _restarted(
    subject: Experiment,
    volume: Path,
    held: list[Manifest],
    results: Results,
    into: dict[str, list[float]],
) -> None:
    """A new server on a copy of ``volume`` (made before the clock starts), handed ``held``
    as stored texts, and its first call: the assignment it issued after them again, and one
    new one; timed into ``into``."""
    with tempfile.TemporaryDirectory() as directory:
        copy = Path(directory) / "volume"
        shutil.copytree(volume, copy)
        history = stored(held)
        started = _now()
        server = SuggestionServer(subject, 0, copy)
        assert server.start(history).source == "restored"
        server.get_suggestions(history, len(held) + 2, results)
        _record(into, started)


def _values(item: Manifest) -> dict[str, float]:
    return {v["name"]: float(v["value"]) for v in item["parameterAssignments"]}
