"""A restart's books, started from the folds a runtime kept, equal books folded in full.

The trial book and the result book save their folds (``app.embedded.kept``) through a real
state database; more changes follow (Trials created, finished, relabelled, deleted, the
Experiment made again); new books, cold, recall the saved folds. Whatever the summary no longer
matches is folded again: the Trials, the ledger and the results are those of a full fold.
A summary damaged on disk is ignored (the books fold in full).
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Mapping
from pathlib import Path
from unittest.mock import patch

import orjson
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from katib_resume.adapters.fake import load
from katib_resume.adapters.fake.cluster import FakeCluster
from katib_resume.adapters.fake.persistence import STATE_FILE, close
from katib_resume.adapters.fake.world import FakeWorld
from katib_resume.app.embedded import kept as kept_module
from katib_resume.app.embedded.kept import Summaries
from katib_resume.app.embedded.results import ResultBook
from katib_resume.app.loop.informer import Informer
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.trial_book import Kept, TrialBook, basis_text
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.model import Trial
from katib_resume.core.objects import version_of
from katib_resume.core.trial_ledger import ledger_of
from tests.property.test_trial_book import NAME, NS, _apply, _experiment, steps

KEY = Key(NS, NAME)
OWN = [("create", name, NS, NAME) for name in ("t1", "t2", "t3")] + [
    ("outcome", "t1", NS, "0.5"),
    ("outcome", "t2", NS, "0.1"),
]
"""Three own Trials, two finished, before the generated history."""
changes = st.lists(  # after the save: mostly changes of Trials, so that most records still match
    st.tuples(
        st.sampled_from(["create", "outcome", "outcome", "relabel", "delete"]),
        st.sampled_from(["t1", "t2", "t3"]),
        st.sampled_from([NS, NS, "elsewhere"]),
        st.sampled_from(["0.1", "0.5", "0.9", NAME, NAME]),
    ),
    max_size=6,
)


def _read(
    cluster: FakeCluster, book: TrialBook, results: ResultBook
) -> tuple[list[str], object, Mapping[str, float | None]]:
    """What the books give for the Experiment now, through a cache listed afresh."""
    informer = Informer(cluster.for_cache())
    experiment = _experiment(cluster)
    assert experiment is not None
    trials, ledger = book.read(informer, KEY, experiment, Trial.model_validate)
    assert ledger is not None
    folded = (ledger.counts, ledger.current_optimal_trial())
    names = sorted(t.metadata.name for t in trials)
    return names, folded, results.results(informer, experiment)


def _full(cluster: FakeCluster) -> tuple[list[str], object, Mapping[str, float | None]]:
    listed = cluster.list(API_VERSION, "Trial", NS, {LABEL_EXPERIMENT: NAME})
    experiment = _experiment(cluster)
    assert experiment is not None
    full = ledger_of(experiment, [Trial.model_validate(t) for t in listed])
    names = sorted(t["metadata"]["name"] for t in listed)
    fresh = ResultBook().results(Informer(cluster.for_cache()), experiment)
    return names, (full.counts, full.current_optimal_trial()), fresh


def _unchanged(cluster: FakeCluster, kept: Kept | None) -> set[tuple[str, str]]:
    """The Experiment's Trials a kept fold (for the Experiment as it is now) holds at their
    version now: those a recalled book takes unparsed (every one of them, in its bulk pass)."""
    experiment = _experiment(cluster)
    assert experiment is not None
    fits = kept is not None and kept.basis == basis_text(experiment)
    records = kept.records if kept is not None and fits else {}
    listed = cluster.list(API_VERSION, "Trial", NS, {LABEL_EXPERIMENT: NAME})
    return {
        (NS, t["metadata"]["name"])
        for t in listed
        if (held := records.get(t["metadata"]["name"])) and held[0] == version_of(t)
    }


def _fresh_results(cluster: FakeCluster) -> ResultBook:
    """A result book read in full, every Trial parsed, through a cache listed afresh."""
    book, experiment = ResultBook(), _experiment(cluster)
    assert experiment is not None
    book.results(Informer(cluster.for_cache()), experiment)
    return book


def _page(book: ResultBook) -> object:
    """A result book's page of the Experiment, in its order: its entries and their versions."""
    page = book.pages[KEY]
    return list(page.by_trial.items()), list(page.versions.items()), list(page.results.items())


def _first_command(
    state: Path, before: list[tuple[str, str, str, str]]
) -> tuple[FakeCluster, FakeWorld]:
    """The Experiment and its Trials made, folded by fresh books, and their summary saved
    whole: the first command on ``state`` (its world left open)."""
    cluster, world = load(state)
    _apply(cluster, ("experiment", "", NS, ""))
    for step in (*OWN, *before):
        _apply(cluster, step)
    book, results = TrialBook(), ResultBook()
    assert _read(cluster, book, results) == _full(cluster)
    Summaries(cluster.store.journal).save(book, results)
    return cluster, world


@settings(max_examples=60, deadline=None)
@given(st.one_of(changes, steps), st.one_of(changes, changes, steps), st.booleans())
@example([], [("outcome", "t1", NS, "0.9")], False)  # a finished Trial's value changed
@example([], [("relabel", "t2", NS, "other"), ("create", "t2", NS, NAME)], False)
def test_books_recalled_from_kept_folds_equal_a_full_fold(
    before: list[tuple[str, str, str, str]],
    after: list[tuple[str, str, str, str]],
    damaged: bool,
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        state = Path(scratch)
        cluster, world = _first_command(state, before)
        for step in after:
            _apply(cluster, step)
        close(world)
        if damaged:
            db = sqlite3.connect(state / STATE_FILE)
            with db:
                db.execute("UPDATE summaries SET body = substr(body, 2)")
            db.close()
        cluster, world = load(state)
        kept = Summaries(cluster.store.journal)
        replaced = any(op == "experiment" for op, *_ in after)  # its summary went with it
        assert (kept.trials(KEY) is None) == (damaged or replaced)
        recalled = TrialBook(kept.trials), ResultBook(recall=kept.results)
        got, full = _read(cluster, *recalled), _full(cluster)
        assert got == full
        assert list(got[2]) == list(full[2])  # the results in the same order (an algorithm's)
        assert set(recalled[0].pages[KEY].raw) == _unchanged(cluster, kept.trials(KEY))
        assert _page(recalled[1]) == _page(_fresh_results(cluster))  # what the next save keeps
        event(f"Trials taken from the kept fold: {len(recalled[0].pages[KEY].raw)}")
        close(world)


def test_a_restart_from_kept_folds_parses_only_what_changed(tmp_path: Path) -> None:
    """Trials unchanged since the save are not parsed; a changed one is."""
    cluster, world = load(tmp_path)
    _apply(cluster, ("experiment", "", NS, ""))
    for name in ("t1", "t2", "t3"):
        _apply(cluster, ("create", name, NS, NAME))
        _apply(cluster, ("outcome", name, NS, "0.5"))
    book, results = TrialBook(), ResultBook()
    _read(cluster, book, results)
    Summaries(cluster.store.journal).save(book, results)
    _apply(cluster, ("outcome", "t2", NS, "0.1"))
    kept, parsed = Summaries(cluster.store.journal), []

    def parse(raw: dict[str, object]) -> Trial:
        parsed.append(raw["metadata"]["name"])  # type: ignore[index]
        return Trial.model_validate(raw)

    informer, experiment = Informer(cluster.for_cache()), _experiment(cluster)
    assert experiment is not None
    trials, ledger = TrialBook(kept.trials).read(informer, KEY, experiment, parse)
    assert parsed == ["t2"] and ledger is not None
    assert ledger.current_optimal_trial() == _full(cluster)[1][1]  # type: ignore[index]
    assert ResultBook(parse, kept.results).results(informer, experiment) == _full(cluster)[2]
    assert parsed == ["t2", "t2"] and len(trials) == 3
    assert sorted(t.metadata.name for t in trials) == ["t1", "t2", "t3"]  # parsed when read
    assert sorted(parsed) == ["t1", "t2", "t2", "t3"]
    close(world)


def _rows(state: Path, table: str) -> int:
    db = sqlite3.connect(state / STATE_FILE)
    try:
        return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        db.close()


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(changes, steps),
    st.lists(st.one_of(changes, changes, steps), min_size=1, max_size=5),
    st.sampled_from([1, 2, kept_module.CHANGES]),
)
@example([], [[("outcome", "t1", NS, "0.9")], [("delete", "t2", NS, "")]], kept_module.CHANGES)
def test_a_summary_kept_as_changes_reads_back_as_the_books_folded_it(
    before: list[tuple[str, str, str, str]],
    rounds: list[list[tuple[str, str, str, str]]],
    most: int,
) -> None:
    """Command after command, each recalling the summary the one before kept and saving what
    it changed (a change, or the summary whole after ``most`` changes): what is read back is
    what the books hold, and the books recalled from it equal a full fold."""
    with tempfile.TemporaryDirectory() as scratch, patch.object(kept_module, "CHANGES", most):
        state = Path(scratch)
        cluster, world = _first_command(state, before)
        close(world)
        for after in rounds:
            cluster, world = load(state)
            for step in after:
                _apply(cluster, step)
            kept = Summaries(cluster.store.journal)
            book, results = TrialBook(kept.trials), ResultBook(recall=kept.results)
            assert _read(cluster, book, results) == _full(cluster)
            kept.save(book, results)
            close(world)
            cluster, world = load(state)
            read = Summaries(cluster.store.journal).summary(KEY)
            assert read is not None and read.changes <= most
            assert read.ledger == book.kept(KEY)
            assert read.results == results.kept(KEY)
            close(world)
        event(f"changes kept: {_rows(state, 'summary_changes')}")


def test_a_command_that_changes_one_trial_appends_a_change_and_rewrites_nothing(
    tmp_path: Path,
) -> None:
    """The summary row stays as it was; one change row holds the one Trial's record."""
    cluster, world = load(tmp_path)
    _apply(cluster, ("experiment", "", NS, ""))
    for step in OWN:
        _apply(cluster, step)
    book, results = TrialBook(), ResultBook()
    _read(cluster, book, results)
    Summaries(cluster.store.journal).save(book, results)
    close(world)
    db = sqlite3.connect(tmp_path / STATE_FILE)
    (body,) = db.execute("SELECT body FROM summaries").fetchone()
    db.close()
    for round_ in range(2):
        cluster, world = load(tmp_path)
        _apply(cluster, ("outcome", "t3", NS, f"0.{round_ + 2}"))
        kept = Summaries(cluster.store.journal)
        book, results = TrialBook(kept.trials), ResultBook(recall=kept.results)
        _read(cluster, book, results)
        kept.save(book, results)
        close(world)
    cluster, world = load(tmp_path)  # a command that changes nothing writes nothing
    kept = Summaries(cluster.store.journal)
    book, results = TrialBook(kept.trials), ResultBook(recall=kept.results)
    _read(cluster, book, results)
    kept.save(book, results)
    close(world)
    db = sqlite3.connect(tmp_path / STATE_FILE)
    assert db.execute("SELECT body FROM summaries").fetchone() == (body,)
    changed = [orjson.loads(b) for (b,) in db.execute("SELECT body FROM summary_changes")]
    db.close()
    assert [[row[0] for row in c["ledger"]["put"]] for c in changed] == [["t3"], ["t3"]]
    assert [c["ledger"]["gone"] for c in changed] == [[], []]
