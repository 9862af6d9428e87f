"""The Trial versions kept settled spare a restart the judging of them, and change nothing.

``app.embedded.settled.SettledTrials`` passes over a Trial held at a version it knows settled
(kept by the last command's summaries, or judged so already) and judges every other one. Kept
versions are of earlier states of the same database (any subset of them, as a command killed
before it saved, or one that saved before later changes, leaves): whatever the history, the
Trials it finds unsettled, and those it reports settled by Experiment, are exactly what
``settled`` says of each Trial now. The summaries carry the versions through a real state
database, and a damaged or older summary names none.
"""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from katib_resume.adapters.fake import load
from katib_resume.adapters.fake.persistence import STATE_FILE, close
from katib_resume.app.embedded.kept import Summaries
from katib_resume.app.embedded.results import ResultBook
from katib_resume.app.embedded.settled import SettledTrials, settled
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.trial_book import TrialBook, _Page
from katib_resume.app.loop.versions import seen_of
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from tests.property.test_settled_trials import _damaged, damages
from tests.property.test_trial_plan import _play, events
from tests.support.trial_player import TrialPlayer
from tests.support.trials import new_trial

histories = st.lists(
    st.tuples(st.booleans(), st.lists(events, max_size=12), damages, st.sampled_from(["a", "b"])),
    min_size=1,
    max_size=4,
)


def _states(
    histories: list[tuple[bool, list[tuple[str, Any]], set[str], str]],
) -> tuple[list[Manifest], list[Manifest]]:
    """Every state each Trial passed through (each at a version of its own, as one database
    numbers them) and the Trials as they are now (the last state, perhaps damaged)."""
    states, now, version = [], [], 0
    for index, (push, history, damage, namespace) in enumerate(histories):
        trial = new_trial(f"t{index % 3}", "Push" if push else "StdOut", namespace)
        player = TrialPlayer(trial)
        player.reconcile()
        for kind, value in history:
            _play(player, kind, value)
            player.reconcile()
            assert player.trial is not None
            version += 1
            states.append(_at(player.trial, version))
        assert player.trial is not None
        version += 1
        now.append(_at(_damaged(player.trial, damage), version))
    return states, now


def _at(trial: Manifest, version: int) -> Manifest:
    trial = copy.deepcopy(trial)
    trial["metadata"]["resourceVersion"] = str(version)
    return trial


@given(histories, st.data())
def test_kept_versions_leave_exactly_the_trials_settled_judges_unsettled(
    histories: list[tuple[bool, list[tuple[str, Any]], set[str], str]], data: st.DataObject
) -> None:
    states, now = _states(histories)
    settled_states = [s for s in states + now if settled(s)]
    some = st.lists(st.sampled_from(settled_states)) if settled_states else st.just([])
    kept = data.draw(some)  # any subset of the settled states, current or not
    book = SettledTrials(seen_of(kept))
    event(f"kept versions still current: {len(set(seen_of(kept)) & set(seen_of(now)))}")
    assert book.unsettled(now) == [t for t in now if not settled(t)]
    expected: dict[Key, list[Any]] = {}
    for trial, seen in zip(now, seen_of(now), strict=True):
        if settled(trial):
            expected.setdefault(Key(trial["metadata"]["namespace"], "exp"), []).append(seen)
    assert book.by_experiment(now) == expected
    assert SettledTrials().unsettled(now) == [t for t in now if not settled(t)]


def test_a_trial_not_at_its_kept_version_is_judged_again() -> None:
    """A version kept settled says nothing of the Trial's next state."""
    trial = _at(new_trial("t"), 7)
    assert not settled(trial)
    kept = SettledTrials([("default", "t", "6"), ("default", "u", "7"), ("other", "t", "7")])
    assert kept.unsettled([trial]) == [trial]


def _save(state: Path, settled_trials: dict[Key, list[Any]]) -> None:
    """Summaries of the Experiments ``settled_trials`` names (made first: a summary is kept
    only for an Experiment the store holds), saved as a runtime closes."""
    cluster, world = load(state)
    for key in settled_trials:
        meta = {"name": key.name, "namespace": key.namespace}
        cluster.create({"apiVersion": API_VERSION, "kind": "Experiment", "metadata": meta})
    book = TrialBook()
    book.pages.update((key, _Page()) for key in settled_trials)
    Summaries(cluster.store.journal).save(book, ResultBook(), settled_trials)
    close(world)


def test_the_summaries_keep_the_settled_versions_and_a_damaged_one_names_none(
    tmp_path: Path,
) -> None:
    kept = {Key("ns", "a"): [("ns", "t1", "5"), ("ns", "t2", None)], Key("ns", "b"): []}
    _save(tmp_path, kept)
    cluster, world = load(tmp_path)
    assert Summaries(cluster.store.journal).settled() == {("ns", "t1", "5"), ("ns", "t2", None)}
    close(world)
    db = sqlite3.connect(tmp_path / STATE_FILE)
    with db:
        db.execute("UPDATE summaries SET body = substr(body, 2) WHERE key = 'experiment:ns/a'")
        db.execute("UPDATE summaries SET body = '{\"settled\": {\"x\": 1}}' WHERE key LIKE '%/b'")
        db.execute("INSERT INTO summaries VALUES ('experiment:ns/c', '{\"ledger\": null}')")
    db.close()
    cluster, world = load(tmp_path)
    assert Summaries(cluster.store.journal).settled() == set()
    close(world)
