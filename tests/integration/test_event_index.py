"""The store's index of the Events' objects on a completed run of Katib's from-volume example:
a format-5 state is upgraded once (its Events' objects filled in and indexed) with ``describe``
printing what it printed before, a reader describes an un-upgraded state as it is, and a reader
finds an object's Events through the index: none about other objects, none recorded after it
opened the state."""

from __future__ import annotations

import io
import shutil
import sqlite3
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake.codec import decode
from katib_resume.adapters.fake.persistence import STATE_FILE, close, load, read
from katib_resume.adapters.fake.sqlite import FORMAT
from katib_resume.app.cli.main import main
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from tests.support.old_stores import as_format_5, event_columns
from tests.support.state_dir import committed

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
NAME, NS = "from-volume-resume", "kubeflow"
DESCRIBED = [("experiment", NAME), ("suggestion", NAME), ("trials",), ("pvc",)]
"""What is described: the Experiment, its Suggestion, every Trial, every claim."""


def katib(*args: str | Path) -> str:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(arg) for arg in args])
    assert code == 0, err.getvalue()
    return out.getvalue()


def described(state: Path) -> list[str]:
    return [katib("describe", *what, "-n", NS, "--state-dir", state) for what in DESCRIBED]


def sql(state: Path, statement: str) -> list[Any]:
    db = sqlite3.connect(state / STATE_FILE)
    try:
        with db:
            return db.execute(statement).fetchall()
    finally:
        db.close()


@pytest.fixture(scope="module")
def completed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    state = tmp_path_factory.mktemp("events") / "state"
    katib("run", "-f", EXAMPLE, "--state-dir", state)
    return state, described(state)


@pytest.fixture
def state(completed: tuple[Path, list[str]], tmp_path: Path) -> Path:
    copy = tmp_path / "state"
    shutil.copytree(completed[0], copy, ignore=shutil.ignore_patterns(".lock"))
    return copy


def test_a_format_5_state_is_upgraded_once_and_described_as_before(
    state: Path, completed: tuple[Path, list[str]]
) -> None:
    as_format_5(state)
    close(load(state)[1])  # opened for writing: upgraded
    assert sql(state, "SELECT format FROM state") == [(FORMAT,)]
    indexes = sql(state, "SELECT name FROM sqlite_master WHERE tbl_name = 'events'")
    assert ("events_by_object",) in indexes
    rows = sql(state, "SELECT body, kind, namespace, name FROM events ORDER BY id")
    assert len(rows) > 40  # the run's Events, each with its object filled in from its body
    for body, *columns in rows:
        ref = decode(body)["ref"]
        assert columns == [ref["kind"], ref["namespace"], ref["name"]]
    assert described(state) == completed[1]
    sql(state, "UPDATE events SET kind = 'Moved' WHERE id = 1")  # not filled in again:
    close(load(state)[1])
    assert sql(state, "SELECT kind FROM events WHERE id = 1") == [("Moved",)]  # upgraded once


def test_a_reader_describes_a_format_5_state_as_it_is(
    state: Path, completed: tuple[Path, list[str]]
) -> None:
    as_format_5(state)
    kept = committed(state)
    assert described(state) == completed[1]  # found by a scan of every Event
    assert sql(state, "SELECT format FROM state") == [(5,)]
    assert event_columns(state) == ["id", "body"] and committed(state) == kept


def test_an_objects_events_are_read_through_the_index(state: Path) -> None:
    """Describing the Experiment reads none of the Trials' Events: one damaged is not read."""
    experiment = katib("describe", "experiment", NAME, "-n", NS, "--state-dir", state)
    sql(
        state,
        "UPDATE events SET body = '{damaged' WHERE id = (SELECT max(id) FROM events "
        "WHERE kind = 'Trial')",
    )
    assert katib("describe", "experiment", NAME, "-n", NS, "--state-dir", state) == experiment
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = main(["describe", "trials", "-n", NS, "--state-dir", str(state)])
    assert code == 2 and STATE_FILE in err.getvalue()  # the Trial's are read, one line says so
    assert len(err.getvalue().splitlines()) == 1


def test_a_reader_finds_no_event_recorded_after_it_opened_the_state(state: Path) -> None:
    ref = ObjectRef(API_VERSION, "Experiment", NS, NAME)
    reader = read(state)
    cluster, world = load(state)
    cluster.record_event(ref, "Normal", "Later", "after the reader opened the state")
    close(world)
    found = reader.events_about(ref.kind, ref.namespace, ref.name)
    assert found and all(event.reason != "Later" for event in found)
    assert read(state).events_about(ref.kind, ref.namespace, ref.name)[-1].reason == "Later"


def test_events_missing_from_the_middle_are_a_damaged_state_not_a_wrong_list(
    state: Path,
) -> None:
    """The Events' count is their span of ids (the table is only appended to): one deleted
    by hand from the middle is found by the reads that rely on it, a whole list or a look-up
    by place, and said in one line, exit 2, rather than listed at the wrong places; an
    object's own Events still read through the index."""
    experiment = katib("describe", "experiment", NAME, "-n", NS, "--state-dir", state)
    sql(state, "DELETE FROM events WHERE id = (SELECT min(id) + 1 FROM events)")
    assert katib("describe", "experiment", NAME, "-n", NS, "--state-dir", state) == experiment
    for argv in (["get", "events"], ["get", "events", NAME]):
        err = io.StringIO()
        with redirect_stdout(io.StringIO()), redirect_stderr(err):
            code = main([*argv, "-n", NS, "--state-dir", str(state)])
        assert code == 2 and "Kubernetes Events expected" in err.getvalue()
        assert len(err.getvalue().splitlines()) == 1
