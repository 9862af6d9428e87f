"""A restart's work beyond the model does not grow with the history: counted, not timed.

A restarted suggestion service reads its saved state, proves that the controller's history is
where it starts, and answers the next call. Of that, only the model may cost more as the trials
grow: an Optuna study's rebuild of the trials its sampler reads and its ask
(``OptunaSearch._study``, ``OptunaSearch._ask``). The rest may grow only by C-level passes over
bytes (the state read, checksummed and compared). So these tests count the Python function calls
a restart makes outside the model, at two sizes ten times apart. Python work for each trial would
add thousands of calls; the counts may differ by a few. A count is deterministic where a timing
on a shared machine is not; the times are the benchmarks' (``benchmarks.algorithms_resume``,
``benchmarks.grpc_service``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

from benchmarks import algorithms_hyperband, pbt
from benchmarks.algorithms import FUNCTIONS, branin, experiment
from benchmarks.algorithms_resume import MODEL, history, saved_state, stored
from benchmarks.grpc_service import Client
from benchmarks.python_calls import counted
from katib_resume.adapters.grpc.api import GET_SUGGESTIONS, encode
from katib_resume.adapters.grpc.trial_bytes import decode_keeping_trials
from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.adapters.local.suggestion.state import FILE_NAME
from katib_resume.adapters.local.suggestion.state_store import StateStore
from katib_resume.app.suggestion.service import SuggestionApi
from katib_resume.core.history import History
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment

SIZES = (200, 2000)
SLACK = 16
"""Calls a restart at the larger size may make beyond the smaller's (none was seen but a few)."""
OPTUNA = ("tpe", "multivariate-tpe", "cmaes", "sobol", "bayesianoptimization")


def python_calls(work: Callable[[], Any], outside: Iterable[CodeType] = ()) -> int:
    """The Python calls ``work()`` makes outside the functions ``outside``."""
    return counted(work, outside)[0]


def _optuna_restart(subject: Experiment, volume: Path, n: int) -> Callable[[], Any]:
    """A restart on a state of ``n`` finished trials written to ``volume``, handed the history
    as the embedded runtime does (its stored texts)."""
    issued, results = saved_state(volume, subject, history(subject, n, branin))
    return _restart(subject, volume, stored(issued), results)


def _restart(
    subject: Experiment, volume: Path, held: History, results: dict[str, float | None]
) -> Callable[[], Any]:
    """A new server on ``volume`` restored, the controller holding ``held``, and asked for one
    new assignment."""

    def restart() -> None:
        server = SuggestionServer(subject, 0, volume)
        assert server.start(held).source == "restored"
        assert len(server.get_suggestions(held, len(held) + 1, results)) == 1

    return restart


def _flat(restarts: list[Callable[[], Any]], outside: Iterable[CodeType] = ()) -> None:
    """The second and third restart make as many Python calls (but ``SLACK``) outside
    ``outside``; the first, run before, imports and fills caches."""
    restarts[0]()
    small, large = (python_calls(restart, outside) for restart in restarts[1:])
    assert large <= small + SLACK, (small, large)


@pytest.mark.parametrize("algorithm", OPTUNA)
def test_an_optuna_search_restarts_with_no_python_work_a_trial_beyond_its_model(
    tmp_path: Path, algorithm: str
) -> None:
    subject = experiment(algorithm, FUNCTIONS["branin"][1], 0)
    _flat([_optuna_restart(subject, tmp_path / str(n), n) for n in (50, *SIZES)], MODEL)


def _grown_restart(subject: Experiment, volume: Path, n: int) -> Callable[[], Any]:
    """A restart of a search grown to ``n`` assignments in batches of 50, every result
    reported before the next batch (``value``: a Trial's), from a snapshot alone: the
    journal's records since the last compaction cost a restart a few Python calls each,
    and they are at most ``state_store.RECORDS``, however long the history (the Optuna
    searches' states above are written as a snapshot alone too)."""
    server = SuggestionServer(subject, 0, volume)
    server.start([])
    held: list[Manifest] = []
    results: dict[str, float | None] = {}
    while len(held) < n:
        batch = server.get_suggestions(held, min(n, len(held) + 50), results)
        assert batch, server.exhausted(len(held) + 1)
        held += batch
        results |= {item["name"]: _value(subject, item) for item in batch}
    path = volume / FILE_NAME  # compacted (a new store's first save), as a 256th save leaves it
    StateStore(path).save(StateStore(path).load())
    return _restart(subject, volume, stored(held), results)


def _value(subject: Experiment, item: Manifest) -> float:
    """Branin of the point (hyperband's seen through a run of ``epochs``), or PBT's loss."""
    if subject.spec.algorithm.algorithm_name == "pbt":
        return pbt.loss(item)
    point = {v["name"]: float(v["value"]) for v in item["parameterAssignments"]}
    if "epochs" in point:
        return algorithms_hyperband.observed(branin, point, int(point["epochs"]))
    return branin(point)


MODEL_FREE = {
    "random": (experiment("random", [(0.0, 100.0), (0.0, 100.0)], 0, step=1.0), (200, 2000)),
    "grid": (experiment("grid", [(0.0, 100.0), (0.0, 100.0)], 0, step=1.0), (200, 2000)),
    "hyperband": (algorithms_hyperband.experiment(FUNCTIONS["branin"][1]), (20, 200)),
    "pbt": (pbt.experiment(), (200, 2000)),
}
"""Each search and two sizes ten times apart (hyperband's schedule at R=81 has 211)."""


@pytest.mark.parametrize("algorithm", MODEL_FREE)
def test_a_search_without_an_optuna_model_restarts_with_no_python_work_a_trial(
    tmp_path: Path, algorithm: str
) -> None:
    subject, sizes = MODEL_FREE[algorithm]
    _flat([_grown_restart(subject, tmp_path / str(n), n) for n in (10, *sizes)])


def _service_restart(volume: Path, n: int) -> Callable[[], Any]:
    """The first call of a ``SuggestionApi`` restarted on ``volume``, where one call issued
    ``n`` assignments and the next was sent their ``n`` Trials (the memo file: two lines)."""
    client, api = Client(), SuggestionApi(volume, 0)
    for count in (n, 1):
        reply = api.get_suggestions(
            decode_keeping_trials(GET_SUGGESTIONS.request, client.request(count))
        )
        client.took(encode(GET_SUGGESTIONS.reply, reply))
    request = decode_keeping_trials(GET_SUGGESTIONS.request, client.request(1))

    def restart() -> None:
        reply = SuggestionApi(volume, 0).get_suggestions(request)
        assert len(reply["parameter_assignments"]) == 1

    return restart


def test_a_restarted_service_does_no_python_work_a_trial(
    tmp_path: Path,
) -> None:
    """Over gRPC every call holds every Trial; a restarted service's first call looks each up
    in its memo file by C-level passes (digests, lookups, the saved order) and decodes only
    the Trials the file does not hold (here the one the last reply made)."""
    _flat([_service_restart(tmp_path / str(n), n) for n in (50, *SIZES)])
