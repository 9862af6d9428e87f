"""A command stopped anywhere in a step keeps nothing that the next command trusts wrongly.

A stop signal's ``KeyboardInterrupt`` lands between any two bytecodes of a ``Runtime.step``,
and the runtime's close then keeps what it derived for the next command: the books' folds and
the Trials found settled (``app.embedded.kept``), the settled Trials sealed in blocks with
notes of their folds (``app.embedded.sealing``), and what each ledger proved of its
Suggestion's assignments (``app.embedded.vouched``). The next command takes all of that unread.
So a resumed run here is stopped in one step at many of the lines the step runs (every
``STRIDE``-th, ``SAMPLE`` more drawn with a fixed seed, and every ``BOOKS``-th of the lines of
the books whose folds the close keeps, where a stop once made the close keep a Trial's old
record at its new version: ``test_interrupted_fold.py``), closed as a command is, and the next
command's books, as recalled from what was kept, are held to a cold fold of the state read back,
before it finishes the Experiment with every Trial. (Run with every line of the store's writes,
the watch cache's sync and the books, three steps of this run, with and without a Trial deleted
meanwhile: nothing found; this keeps a sample that runs in seconds, and fails without the books
dropping an unfinished page.)
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from katib_resume.adapters.fake.persistence import read
from katib_resume.app.cli.edit import apply_edit
from katib_resume.app.cli.run import create, run_to_completion
from katib_resume.app.embedded import driver, sealing
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.options import Options
from katib_resume.app.embedded.results import ResultBook
from katib_resume.app.embedded.settled import settled
from katib_resume.app.loop.informer import Informer
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.versions import seen_of
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.model import Experiment, Suggestion, Trial
from katib_resume.core.trial_ledger import ledger_of
from tests.support.interrupts import Where, lines_run, stopped_at

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "from-volume-resume.yaml"
NAME, NS = "from-volume-resume", "kubeflow"
KEY = Key(NS, NAME)
EXPERIMENT = ObjectRef(API_VERSION, "Experiment", NS, NAME)
SUGGESTION = ObjectRef(API_VERSION, "Suggestion", NS, NAME)
FIRST, THEN = 3, 6
"""The Trials of the first command, and the budget the stopped one resumes to."""
STEPS = (0, 1, 2)
"""The resumed run's steps stopped: the first (its books recalled from the kept folds and
notes), the one that makes the new Trials, the one that folds them finished (the last that
writes anything)."""
STRIDE, SAMPLE = 997, 30
BOOKS = {"app/loop/trial_book.py": 4, "app/embedded/results.py": 1}
"""The books' files, and every how many of their lines are stopped at."""


@pytest.fixture(autouse=True)
def _small(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Blocks of a few Trials, so the first command's are sealed and the stopped one seals and
    merges; a stall told in seconds, not minutes."""
    monkeypatch.setattr(sealing, "SEAL_AT", 2)
    monkeypatch.setattr(driver, "STALL_STEPS", 300)
    yield


def _experiment(trials: int) -> Experiment:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["spec"]["maxTrialCount"] = trials
    return Experiment.model_validate(manifest)


def _stopped(state: Path, step: int, line: int) -> bool:
    """The command that resumes ``state`` to ``THEN`` Trials, stopped at ``line`` of its step
    ``step`` as by a signal (the interrupt goes through the session, which closes the runtime);
    whether it was stopped there."""
    try:
        with session(Options(state)) as runtime:
            apply_edit(runtime, NS, NAME, {"maxTrialCount": THEN})
            for _ in range(step):
                runtime.step()
            if stopped_at(line, runtime.step):
                raise KeyboardInterrupt("SIGTERM")
    except KeyboardInterrupt:
        return True
    return False


def _lines(first: Path, copies: Path, step: int) -> list[Where]:
    """Where each line of the resumed run's step ``step`` is (the command run whole on a copy
    of ``first``), as a run after one in the same process runs them: the first run of a step
    may also run the bodies of the modules it imports first and fill the process's caches. A
    later run may still run fewer lines (a fresh-clone CI run once ended step 1 before a line
    that its count had reached), so a line it does not reach is skipped: the test asks that
    nearly all are reached."""
    for run in range(2):
        state = copies / f"lines-{step}-{run}"
        shutil.copytree(first, state, ignore=shutil.ignore_patterns(".lock"))
        with session(Options(state)) as runtime:
            apply_edit(runtime, NS, NAME, {"maxTrialCount": THEN})
            for _ in range(step):
                runtime.step()
            where = lines_run(runtime.step)
    return where


def _sampled(where: list[Where], seed: int) -> list[int]:
    """The lines stopped at (``stopped_at``'s numbers, from 1)."""
    count = len(where)
    lines = set(range(1, count + 1, STRIDE))
    lines |= set(random.Random(seed).sample(range(1, count + 1), SAMPLE))
    for book, every in BOOKS.items():
        lines |= set([at for at, (file, _) in enumerate(where, 1) if file.endswith(book)][::every])
    return sorted(lines)


def _wrong(state: Path) -> list[str]:
    """What the next command, resumed from ``state``, takes from the kept state and a cold fold
    of the state does not give, and whether it then finishes the Experiment."""
    cold = read(state)
    experiment = Experiment.model_validate(cold.get(EXPERIMENT))
    listed = cold.list(API_VERSION, "Trial", NS, {LABEL_EXPERIMENT: NAME})
    full = ledger_of(experiment, [Trial.model_validate(t) for t in listed])
    results = dict(ResultBook().results(Informer(cold.for_cache()), experiment))
    history = (cold.get(SUGGESTION).get("status") or {}).get("suggestions") or []
    wrong = []
    with session(Options(state)) as runtime:
        for at, trial in zip(seen_of(listed), listed, strict=True):
            if at in runtime.settled.known and not settled(trial):
                wrong.append(f"{at} taken as settled")
        now = Experiment.model_validate(runtime.informer.get(EXPERIMENT))
        _, ledger = runtime.parsed.book.read(runtime.informer, KEY, now, Trial.model_validate)
        assert ledger is not None
        for trial in listed:
            name = trial["metadata"]["name"]
            if ledger.record(name) != full.record(name):
                wrong.append(f"{name}: {ledger.record(name)} for {full.record(name)}")
        if ledger.counts != full.counts:
            wrong.append(f"counts {ledger.counts} for {full.counts}")
        if ledger.current_optimal_trial() != full.current_optimal_trial():
            wrong.append("another optimal Trial")
        recalled = dict(runtime.services.result_book.results(runtime.informer, now))
        if recalled != results:
            wrong.append(f"results {recalled} for {results}")
        suggestion = Suggestion.model_validate(runtime.informer.get(SUGGESTION))
        assigned = (suggestion.status.suggestions if suggestion.status else None) or ()
        if ledger.assigned(assigned) != full.assigned(history):
            wrong.append(f"{ledger.assigned(assigned)} assignments with a Trial")
        try:
            run_to_completion(runtime, EXPERIMENT)
        except driver.Unsettled as error:
            wrong.append(str(error))
        status = runtime.cluster.get(EXPERIMENT)["status"]
        trials = len(runtime.cluster.store.of_kind(API_VERSION, "Trial"))
        if trials != THEN or status.get("trials") != THEN or status.get("trialsSucceeded") != THEN:
            wrong.append(f"ended with {trials} Trials: {status.get('conditions')}")
    return wrong


def test_a_run_stopped_anywhere_in_a_step_leaves_what_a_cold_fold_gives(tmp_path: Path) -> None:
    first = tmp_path / "first"
    with session(Options(first)) as runtime:
        run_to_completion(runtime, create(runtime, _experiment(FIRST), None, 1))
    failures: list[str] = []
    stops = 0
    for step in STEPS:
        where = _lines(first, tmp_path, step)
        for line in _sampled(where, step):
            state = tmp_path / "stopped"
            shutil.rmtree(state, ignore_errors=True)
            shutil.copytree(first, state, ignore=shutil.ignore_patterns(".lock"))
            if not _stopped(state, step, line):  # the step ended first: a run lines short
                continue
            stops += 1
            failures += [f"step {step}, line {line}: {wrong}" for wrong in _wrong(state)[:3]]
    assert stops > 200  # (the steps ran, traced, and nearly every line sampled was reached)
    assert not failures, "\n".join(failures[:20])
