"""Commands on a state directory end alike with and without what their closes vouch for.

A close keeps, with each Experiment's summary, how many of the Suggestion's stored assignments
have a Trial (``app.embedded.vouched``), and the next restart's ledger tests only the later
ones. Drawn here: sequences of resumes (the budget raised by one to three), each after one of
the Experiment's Trials was deleted, or none: by a command that keeps no summary (as one killed
before its close would leave it), or inside a command after the Experiment's last reconcile
(its close then saves a summary made before the deletion). The same sequence runs on a copy
whose summaries are dropped before every command; after each step both directories hold the
same cluster, object for object (a deleted Trial's assignment has no Trial, and a resume must
run it again in both).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.fake import FakeCluster, load
from katib_resume.adapters.fake.persistence import STATE_FILE, close, read
from katib_resume.app.cli.run import run_to_completion
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.options import Options
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from tests.integration.test_kept_restart import NAME, NS, _resume
from tests.integration.test_vouched_restart import _grown

Step = tuple[str | None, int, int]
"""A Trial deleted (how, which) or none, then a resume (the budget raised by so much)."""
DELETIONS = [None, "deleted, no summary", "deleted, then closed"]
steps = st.lists(
    st.tuples(st.sampled_from(DELETIONS), st.integers(0, 99), st.integers(1, 3)),
    min_size=1,
    max_size=3,
)


def _delete(cluster: FakeCluster, pick: int) -> None:
    """One of the Experiment's Trials (the ``pick``-th by name) deleted outright."""
    trials = sorted(
        cluster.store.of_kind(API_VERSION, "Trial"), key=lambda t: t["metadata"]["name"]
    )
    if not trials:
        return
    trial = trials[pick % len(trials)]
    ref = ObjectRef(API_VERSION, "Trial", NS, trial["metadata"]["name"])
    held = cluster.set_finalizers(ref, [], trial["metadata"]["resourceVersion"])
    cluster.delete(ref, held["metadata"]["uid"])


def _play(state: Path, step: Step, budget: int) -> None:
    deletion, pick, _ = step
    if deletion == "deleted, no summary":
        cluster, world = load(state)
        _delete(cluster, pick)
        close(world)
    elif deletion == "deleted, then closed":  # after the Experiment's reconciles
        with session(Options(state)) as runtime:
            run_to_completion(runtime, ObjectRef(API_VERSION, "Experiment", NS, NAME))
            _delete(runtime.cluster, pick)
    _resume(state, budget)


def _forget(state: Path) -> None:
    db = sqlite3.connect(state / STATE_FILE)
    with db:
        db.execute("DELETE FROM summaries")
        db.execute("DELETE FROM summary_changes")
    db.close()


@settings(max_examples=12, deadline=None)
@given(steps)
def test_a_sequence_ends_as_the_same_sequence_without_summaries(sequence: list[Step]) -> None:
    with TemporaryDirectory() as directory:
        kept, bare = Path(directory) / "kept", Path(directory) / "bare"
        budget = 3
        _grown(kept, budget)
        shutil.copytree(kept, bare, ignore=shutil.ignore_patterns(".lock"))
        for step in sequence:
            budget += step[2]
            _play(kept, step, budget)
            _forget(bare)
            _play(bare, step, budget)
            assert read(kept).store.to_dict() == read(bare).store.to_dict()
