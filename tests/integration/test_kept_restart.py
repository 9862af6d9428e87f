"""A restart from the folds the last command kept does exactly what a restart without them does.

The summaries (``app.embedded.kept``) only spare a restart the parse of Trials that did not
change: whether they are there, missing or damaged, the same state directory restarted to the
same budget ends in the same cluster, write for write.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from katib_resume.adapters.fake import FakeCluster, load
from katib_resume.adapters.fake.persistence import STATE_FILE, close, read
from katib_resume.app.cli.delete import delete_experiment
from katib_resume.app.cli.edit import apply_edit
from katib_resume.app.cli.run import create, run_to_completion
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.kept import Summaries
from katib_resume.app.embedded.options import Options
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.versions import seen_of
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.model import Experiment

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "from-volume-resume.yaml"
NAME, NS = "from-volume-resume", "kubeflow"


def _experiment(trials: int) -> Experiment:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["spec"]["maxTrialCount"] = trials
    return Experiment.model_validate(manifest)


def _summaries(state: Path, statement: str) -> int:
    db = sqlite3.connect(state / STATE_FILE)
    with db:
        changed = db.execute(statement).rowcount
    db.close()
    return changed


def _resume(state: Path, trials: int) -> None:
    with session(Options(state)) as runtime:
        apply_edit(runtime, NS, NAME, {"maxTrialCount": trials})
        run_to_completion(runtime, ObjectRef(API_VERSION, "Experiment", NS, NAME))


@pytest.mark.parametrize("summary", ["missing", "damaged"])
def test_a_restart_with_kept_folds_ends_as_one_without(tmp_path: Path, summary: str) -> None:
    kept, other = tmp_path / "kept", tmp_path / "other"
    with session(Options(kept)) as runtime:
        run_to_completion(runtime, create(runtime, _experiment(6), None, 1))
    db = sqlite3.connect(kept / STATE_FILE)
    assert db.execute("SELECT key FROM summaries").fetchall() == [(f"experiment:{NS}/{NAME}",)]
    db.close()
    shutil.copytree(kept, other, ignore=shutil.ignore_patterns(".lock"))
    if summary == "missing":
        assert _summaries(other, "DELETE FROM summaries") == 1
    else:
        assert _summaries(other, "UPDATE summaries SET body = '{\"ledger\": 1}'") == 1
    _resume(kept, 9)
    _resume(other, 9)
    one, two = read(kept), read(other)
    assert one.store.to_dict() == two.store.to_dict()
    assert _told(one, kept, other) == _told(two, kept, other)  # the directories' names aside


def _told(cluster: FakeCluster, *paths: Path) -> list[tuple[str, str, str]]:
    told = []
    for event in cluster.events:
        message = event.message
        for path in paths:
            message = message.replace(str(path), "<state>")
        told.append((str(event.ref), event.reason, message))
    return told


def test_a_deleted_experiment_leaves_no_summary(tmp_path: Path) -> None:
    """The summary goes with its Experiment, in the same command: the runtime that deleted it
    saves none for it when it closes, and a namesake created later starts from a full fold."""
    state = tmp_path / "state"
    with session(Options(state)) as runtime:
        run_to_completion(runtime, create(runtime, _experiment(3), None, 1))
    db = sqlite3.connect(state / STATE_FILE)
    assert db.execute("SELECT count(*) FROM summaries").fetchone() == (1,)
    db.close()
    with session(Options(state)) as runtime:
        delete_experiment(runtime, NS, NAME)
    db = sqlite3.connect(state / STATE_FILE)
    assert db.execute("SELECT count(*) FROM summaries").fetchone() == (0,)
    db.close()


def test_resumes_keep_their_changes_and_the_summary_names_every_settled_trial(
    tmp_path: Path,
) -> None:
    """The first command writes the summary whole; each resume appends what it changed, and
    the summary read back names every Trial settled now, at its version, with its record."""
    state = tmp_path / "state"
    with session(Options(state)) as runtime:
        run_to_completion(runtime, create(runtime, _experiment(4), None, 1))
    db = sqlite3.connect(state / STATE_FILE)
    (body,) = db.execute("SELECT body FROM summaries").fetchone()
    db.close()
    for budget in (6, 8):
        _resume(state, budget)
    db = sqlite3.connect(state / STATE_FILE)
    assert db.execute("SELECT body FROM summaries").fetchone() == (body,)
    assert db.execute("SELECT count(*) FROM summary_changes").fetchone() == (2,)
    db.close()
    cluster, world = load(state)
    trials = cluster.store.of_kind(API_VERSION, "Trial")
    summary = Summaries(cluster.store.journal).summary(Key(NS, NAME))
    assert summary is not None and summary.ledger is not None and summary.results is not None
    now = set(seen_of(trials))
    assert len(now) == 8 and summary.settled >= now
    assert {n: v for n, (v, _) in summary.ledger.records.items()} == {
        t["metadata"]["name"]: t["metadata"]["resourceVersion"] for t in trials
    }
    # the result book holds the Trials the suggestion service was last asked with: all but the
    # ones that finished after its last call
    assert len(summary.results.entries) >= 6 and set(summary.results.entries) <= {
        t["metadata"]["name"] for t in trials
    }
    close(world)
