"""A restart takes what the last close proved of the assignments, and only while it still holds.

The close keeps, with the Experiment's summary, how many of the Suggestion's stored assignments
each had a Trial (``app.embedded.vouched``); the next restart's ledger tests only the later ones.
A Trial written after that close (by a command killed before its own) voids the claim: the
restart proves every assignment again and ends as a restart without any summary does.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake import load
from katib_resume.adapters.fake.persistence import STATE_FILE, close, read
from katib_resume.app.cli.run import create, run_to_completion
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.kept import Summaries
from katib_resume.app.embedded.options import Options
from katib_resume.app.loop.keys import Key
from katib_resume.core import trial_ledger
from katib_resume.core.actions import ObjectRef
from katib_resume.core.history import names_of
from katib_resume.core.katib import API_VERSION
from tests.integration.test_kept_restart import NAME, NS, _experiment, _resume


def _grown(state: Path, trials: int) -> None:
    with session(Options(state)) as runtime:
        run_to_completion(runtime, create(runtime, _experiment(trials), None, 1))


def _starts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Where each read of the assignments' names by a ledger starts, from now on."""
    starts: list[int] = []

    def spy(items: Any, start: int = 0) -> list[str]:
        starts.append(start)
        return names_of(items, start)

    monkeypatch.setattr(trial_ledger, "names_of", spy)
    return starts


def test_the_close_vouches_for_the_assignments_and_a_restart_reads_none_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    _grown(state, 6)
    cluster, world = load(state)
    summary = Summaries(cluster.store.journal).summary(Key(NS, NAME))
    close(world)
    assert summary is not None and summary.vouched is not None and summary.vouched.held == 6
    starts = _starts(monkeypatch)
    _resume(state, 9)
    assert starts and min(starts) == 6  # the six vouched for are never read again


def _written(state: Path, write: str) -> None:
    """One Trial of the Experiment's written by a command that keeps no summary (as one
    killed before its close): deleted, or made another Experiment's."""
    cluster, world = load(state)
    (trial, *_) = cluster.store.of_kind(API_VERSION, "Trial")
    ref = ObjectRef(API_VERSION, "Trial", NS, trial["metadata"]["name"])
    held = cluster.set_finalizers(ref, [], trial["metadata"]["resourceVersion"])
    if write == "deleted":
        cluster.delete(ref, held["metadata"]["uid"])
    else:
        moved = {**held, "metadata": {**held["metadata"], "labels": {"experiment": "another"}}}
        cluster.update(moved)
    close(world)


@pytest.mark.parametrize("write", ["deleted", "relabelled"])
def test_a_trial_written_after_the_close_voids_the_claim(tmp_path: Path, write: str) -> None:
    state = tmp_path / "state"
    _grown(state, 6)
    _written(state, write)
    cluster, world = load(state)
    summaries = Summaries(cluster.store.journal)
    summary, kept = summaries.summary(Key(NS, NAME)), summaries.trials(Key(NS, NAME))
    close(world)
    assert summary is not None and summary.vouched is not None  # kept, but not vouched for
    assert kept is not None and kept.vouched is None


def test_a_restart_after_a_trial_was_deleted_reads_every_name_and_ends_as_one_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deleted Trial's assignment has no Trial any more: the restart finds it, as one
    without any summary does."""
    state, other = tmp_path / "state", tmp_path / "other"
    _grown(state, 6)
    _written(state, "deleted")
    shutil.copytree(state, other, ignore=shutil.ignore_patterns(".lock"))
    db = sqlite3.connect(other / STATE_FILE)
    with db:
        db.execute("DELETE FROM summaries")
    db.close()
    starts = _starts(monkeypatch)
    _resume(state, 9)
    assert 0 in starts
    _resume(other, 9)
    assert read(state).store.to_dict() == read(other).store.to_dict()


def test_a_trial_deleted_after_the_last_reconcile_is_not_vouched_for(tmp_path: Path) -> None:
    """The close vouches only with a ledger that saw every write: a Trial deleted after the
    Experiment's last reconcile, in the same command, leaves the claim unmade, and the next
    restart ends as one without any summary."""
    state, other = tmp_path / "state", tmp_path / "other"
    with session(Options(state)) as runtime:
        run_to_completion(runtime, create(runtime, _experiment(6), None, 1))
        cluster = runtime.cluster
        (trial, *_) = cluster.store.of_kind(API_VERSION, "Trial")
        ref = ObjectRef(API_VERSION, "Trial", NS, trial["metadata"]["name"])
        held = cluster.set_finalizers(ref, [], trial["metadata"]["resourceVersion"])
        cluster.delete(ref, held["metadata"]["uid"])
    cluster, world = load(state)
    summary = Summaries(cluster.store.journal).summary(Key(NS, NAME))
    close(world)
    assert summary is not None and summary.vouched is None
    shutil.copytree(state, other, ignore=shutil.ignore_patterns(".lock"))
    db = sqlite3.connect(other / STATE_FILE)
    with db:
        db.execute("DELETE FROM summaries")
    db.close()
    _resume(state, 9)
    _resume(other, 9)
    assert read(state).store.to_dict() == read(other).store.to_dict()
