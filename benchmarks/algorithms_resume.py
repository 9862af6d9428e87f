"""What a restart and a call of the suggestion service cost, beside Optuna's own, in one run.

With ``n`` = 100 / 1,000 / 5,000 finished Trials on the volume (the same random points and
Branin values for both sides), for every Optuna-based algorithm:

- ``restart``: ours is a new ``SuggestionServer`` reading its state (snapshot and journal),
  checking it against the history and answering the next ``GetSuggestions`` (one new
  assignment, saved); Optuna's is ``load_study`` on SQLite and the first ``ask``, with the same
  sampler (``load_study`` and ``ask`` apart too: Optuna's ``ask`` reads the trials from SQLite
  as well as fitting).
- ``parts``: the same restart taken apart, each part timed alone on the same state: ``read``
  (the state read and checksummed, its cursor parsed, the history compared with the saved
  assignments' bytes: ``unparsed.py``), ``index`` (the assignments' names; their points are
  read when asked for),
  ``rebuild`` (the in-memory study), ``fit`` (the first ask: the model fit every call pays),
  ``save`` (the next state saved: a record appended to the journal, one ``fsync``).
  ``rest_over_fit_cpu`` is the restart without its fit over the fit: the work a restart adds
  to a call.
- ``restart_chained``: the same restart handed the history as the embedded runtime hands it,
  the Suggestion's ``status.suggestions`` as a writer's store holds them: their stored JSON
  texts, decoded when read (``adapters/fake/chained.py``, built before the clock starts, as an
  open builds it), which the read proves equal to the saved assignments by comparing the texts
  with the saved bytes, and of which a rebuild decodes only the items it reads;
  its parts are the same names ending ``_chained``, ``rest_over_fit_chained_cpu`` its rest
  over its own fit, ``ratio_wall``'s ``restart_chained`` its wall time over Optuna's restart.
- ``restart_journaled``: the same restart from a state whose journal is as long as it gets
  with the next save still an append (``state_store.RECORDS`` - 1 records, one assignment and
  its result each, after a snapshot of the rest), ``rest_over_fit_journaled_cpu`` its rest
  over the fit (the one above is of a state just compacted; the save after a full journal
  compacts, a cost of every 256th save, not of a restart).
- ``python_calls``: the Python function calls of one ``restart_chained``, outside the model
  (its study rebuilt and asked: ``MODEL``) and inside it, counted, not timed.
- ``call``: a running service told one new result (Katib sends every Trial in every request,
  so the request holds all ``n``) asked for one assignment and saving it; Optuna's is ``tell``
  plus ``ask`` on the loaded SQLite study.

Wall-clock medians of ``repeats`` and, because the machine is shared, CPU-time medians too
(seconds, to the microsecond).
"""

from __future__ import annotations

import gc
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import optuna

from benchmarks.python_calls import counted
from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.fake.codec import encode
from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.adapters.local.suggestion import state as store
from katib_resume.adapters.local.suggestion.algorithms import build
from katib_resume.adapters.local.suggestion.assignments import (
    Index,
    assignment,
    name_for,
    point_of,
)
from katib_resume.adapters.local.suggestion.column import Column
from katib_resume.adapters.local.suggestion.optuna_search import OptunaSearch
from katib_resume.adapters.local.suggestion.optuna_space import distributions
from katib_resume.adapters.local.suggestion.state_store import RECORDS, StateStore
from katib_resume.core.model import Experiment

Results = dict[str, float | None]
MODEL = frozenset((OptunaSearch._study.__code__, OptunaSearch._ask.__code__))
"""An Optuna search's model: its study rebuilt (of the trials its sampler reads) and asked;
what of a restart ``python_calls`` counts apart."""
Clock = Callable[[], float]
CLOCKS: dict[str, Clock] = {"wall": time.perf_counter, "cpu": time.process_time}


def history(subject: Experiment, n: int, f: Callable[[dict[str, float]], float]) -> list[Any]:
    """``n`` random points of the space with their values, the same for both sides."""
    search = build(subject, 0)
    rng = random.Random(n)
    points = [search.space.sample(rng) for _ in range(n)]
    return [(point, f({k: float(v) for k, v in point})) for point in points]


def saved_state(
    directory: Path, subject: Experiment, done: list[Any], records: int = 0
) -> tuple[list[Any], Results]:
    """A state file of the finished assignments ``done``, as our server would have saved it:
    a snapshot of them all, or with ``records``, a snapshot of all but the last ``records`` and
    a journal record for each of those (one assignment and its result a save)."""
    search = build(subject, 0)
    issued: list[Any] = []
    told: list[float] = []  # by assignment index (told_column.py)
    results: Results = {}
    taken: set[str] = set()
    for index, (point, value) in enumerate(done):
        name = name_for("b", 0, index, taken)
        taken.add(name)
        issued.append(assignment(name, point))
        told.append(value)
        results[name] = value
    algorithm = subject.spec.algorithm.algorithm_name
    space = search.space.fingerprint()
    saver = StateStore(directory / store.FILE_NAME)
    for end in range(max(0, len(done) - records), len(done) + 1):  # a snapshot, then appends
        cursor = {**search.start(), "told": Column.of(told[:end])}
        saver.save(store.SearchState("bench/b", algorithm, 0, space, cursor, tuple(issued[:end])))
    return issued, results


def stored(issued: list[Any]) -> Chained:
    """``issued`` as a writer's store opens the Suggestion's assignments: their stored texts
    (``codec.encode``, as the store writes them), none decoded (``rows.py``)."""
    return Chained.of(Texts([encode(item) for item in issued]), len(issued))


def ours(subject: Experiment, done: list[Any], repeats: int) -> dict[str, dict[str, float]]:
    """Restart, call and the restart's parts, of our service, per clock; the restart and its
    parts handed the history as a list, and as the embedded runtime's stored texts.

    Each repeat starts from a collected heap. A repeat drops the servers and studies it built,
    which only the cycle collector frees, and its full passes come seldom here: the service
    puts what it decodes in the oldest generation without a walk (``adapters/heap.py``), so
    over the repeats the garbage grew by 25,000 objects a restart, to a million, and the same
    restart ran up to three times slower (a TPE rebuild from stored texts at 5,000 in 35 ms,
    not 13). A pod restarts in a new process, with none of it. (Collected just before each
    timed part instead, every part ran on cold caches: twice as slow at 100.)"""
    times: dict[str, dict[str, list[float]]] = {
        part: {clock: [] for clock in CLOCKS}
        for part in ("restart", "restart_journaled", "restart_chained", "call", *PARTS, *CHAINED)
    }
    for _ in range(repeats):
        gc.collect()  # the last repeat's servers and studies (see below)
        with tempfile.TemporaryDirectory() as parts, tempfile.TemporaryDirectory() as directory:
            held, _ = saved_state(Path(parts), subject, done)
            _parts(times, subject, Path(parts), held)  # on a copy: its save appends one
            issued, results = saved_state(Path(directory), subject, done)
            started = _now()
            server, new = _restarted(subject, Path(directory), issued, results)
            _record(times["restart"], started)
            held = issued + new
            results[held[-1]["name"]] = 1.0
            started = _now()
            held += server.get_suggestions(held, len(held) + 1, results)
            _record(times["call"], started)
        with tempfile.TemporaryDirectory() as parts, tempfile.TemporaryDirectory() as directory:
            held, _ = saved_state(Path(parts), subject, done)
            _parts(times, subject, Path(parts), stored(held), "_chained")
            issued, results = saved_state(Path(directory), subject, done)
            history = stored(issued)
            started = _now()
            _restarted(subject, Path(directory), history, results)
            _record(times["restart_chained"], started)
        with tempfile.TemporaryDirectory() as directory:
            issued, results = saved_state(Path(directory), subject, done, RECORDS - 1)
            started = _now()
            _restarted(subject, Path(directory), issued, results)
            _record(times["restart_journaled"], started)
    return {part: _medians(clocks) for part, clocks in times.items()}


def _restarted(
    subject: Experiment, volume: Path, history: Sequence[Any], results: Results
) -> tuple[SuggestionServer, list[Any]]:
    """A new server on ``volume`` restored and asked for one new assignment (saved), the
    controller holding ``history``; the server and the assignment."""
    server = SuggestionServer(subject, 0, volume)
    report = server.start(history)
    assert report.source == "restored", report.reason
    return server, server.get_suggestions(history, len(history) + 1, results)


PARTS = ("read", "index", "rebuild", "fit", "save")
CHAINED = tuple(f"{part}_chained" for part in PARTS)


def _parts(
    times: dict[str, dict[str, list[float]]],
    subject: Experiment,
    volume: Path,
    held: Sequence[Any],
    suffix: str = "",
) -> None:
    """The parts of a restart, each timed alone (what ``SuggestionServer`` does in turn), the
    controller holding ``held``; recorded under each part's name and ``suffix``."""
    path = volume / store.FILE_NAME
    started = _now()
    saver = StateStore(path)
    state = saver.load(held)
    _record(times["read" + suffix], started)
    started = _now()
    index = Index.of(state.issued)
    _record(times["index" + suffix], started)
    search = build(subject, 0)
    assert isinstance(search, OptunaSearch)
    started = _now()
    live = search._study(state.cursor, index.points)
    _record(times["rebuild" + suffix], started)
    started = _now()
    search._ask(live, len(live.numbers), live.seen)
    _record(times["fit" + suffix], started)
    fresh = [assignment("b-next", point_of(state.issued[-1]))]  # as the server extends it:
    grown = replace(state, issued=state.issued + tuple(fresh))  # a history is not decoded
    started = _now()
    saver.save(grown)
    _record(times["save" + suffix], started)


def optuna_side(subject: Experiment, done: list[Any], repeats: int) -> dict[str, dict[str, float]]:
    """Optuna's ``load_study`` (SQLite) + ``ask``, and ``tell`` + ``ask``, per clock."""
    search = build(subject, 0)
    assert isinstance(search, OptunaSearch)
    space = distributions(search.space)
    trials = [
        optuna.trial.create_trial(
            params={k: float(v) for k, v in point}, distributions=space, value=value
        )
        for point, value in done
    ]
    times: dict[str, dict[str, list[float]]] = {
        part: {clock: [] for clock in CLOCKS} for part in ("restart", "load_study", "ask", "call")
    }
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite:///{directory}/study.db"
        optuna.create_study(storage=url, study_name="b").add_trials(trials)
        for _ in range(repeats):
            started = _now()
            study = optuna.load_study(study_name="b", storage=url, sampler=search.make(0))
            _record(times["load_study"], started)
            asking = _now()
            trial = study.ask(space)
            _record(times["ask"], asking)
            _record(times["restart"], started)
            started = _now()
            study.tell(trial, 1.0)
            study.ask(space)
            _record(times["call"], started)
    return {part: _medians(clocks) for part, clocks in times.items()}


def case(
    subject: Experiment, n: int, repeats: int, f: Callable[[dict[str, float]], float]
) -> dict[str, Any]:
    """Ours and Optuna's resume at ``n`` completed trials, and their ratios."""
    done = history(subject, n, f)
    mine, theirs = ours(subject, done, repeats), optuna_side(subject, done, repeats)
    entry: dict[str, Any] = {"ours": mine, "optuna_sqlite": theirs}
    entry["ratio_wall"] = {
        part: round(mine[part]["wall"] / theirs[part.split("_")[0]]["wall"], 3)
        for part in ("restart", "call", "restart_chained")
    }
    fit = mine["fit"]["cpu"]
    entry["rest_over_fit_cpu"] = round((mine["restart"]["cpu"] - fit) / fit, 2)
    journaled = mine["restart_journaled"]["cpu"]
    entry["rest_over_fit_journaled_cpu"] = round((journaled - fit) / fit, 2)
    fit, chained = mine["fit_chained"]["cpu"], mine["restart_chained"]["cpu"]
    entry["rest_over_fit_chained_cpu"] = round((chained - fit) / fit, 2)
    entry["python_calls"] = restart_calls(subject, done)
    return entry


def restart_calls(subject: Experiment, done: list[Any]) -> dict[str, int]:
    """The Python calls of one ``restart_chained``, outside the model and in it
    (``python_calls``): a figure the machine does not move, which says whether a restart
    does Python work for each trial (``tests/integration/test_restart_work.py`` bounds it)."""
    with tempfile.TemporaryDirectory() as directory:
        issued, results = saved_state(Path(directory), subject, done)
        restart = partial(_restarted, subject, Path(directory), stored(issued), results)
        outside, model = counted(restart, MODEL)
    return {"outside_model": outside, "model": model}


def _now() -> dict[str, float]:
    return {name: clock() for name, clock in CLOCKS.items()}


def _record(into: dict[str, list[float]], started: dict[str, float]) -> None:
    for name, clock in CLOCKS.items():
        into[name].append(clock() - started[name])


def _medians(clocks: dict[str, list[float]]) -> dict[str, float]:
    return {name: round(statistics.median(values), 6) for name, values in clocks.items()}
