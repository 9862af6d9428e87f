"""The Experiment's trial-name lists kept as splices on SQLite (``adapters/fake/splices.py``):
every revision in the window, the undo and the live objects read back as they were written,
a reopened writer continues the chains it finds, and a write stores what it changed."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake import FakeCluster, load
from katib_resume.adapters.fake.persistence import STATE_FILE, read
from katib_resume.adapters.fake.splices import REBASE
from katib_resume.adapters.fake.sqlite import WINDOW
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.ports import ClusterError
from tests.integration.test_fake_world import NS

OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["create", "start", "start", "finish", "fail", "drop", "odd", "edit", "delete"]
        ),
        st.integers(0, 1),
        st.integers(0, 9),
    ),
    max_size=60,
)


def _ref(n: int) -> ObjectRef:
    return ObjectRef(API_VERSION, "Experiment", NS, f"e{n}")


def apply(cluster: FakeCluster, ops: list[tuple[str, int, int]]) -> None:
    """Status writes moving trial names between the lists, as the controller writes them
    (sorted), writes no controller makes (a list gone, a value that is no list), and edits of
    the spec, after which the undo and the live revision hold the same lists (``edit``)."""
    for op, n, k in ops:
        ref = _ref(n)
        try:
            if op == "create":
                cluster.create(
                    {
                        "apiVersion": API_VERSION,
                        "kind": "Experiment",
                        "metadata": {"name": ref.name, "namespace": NS},
                        "spec": {},
                    }
                )
                continue
            if op == "delete":
                cluster.delete(ref, "")
                continue
            if op == "edit":  # the spec only: the undo is the revision of the same lists
                cluster.update_spec(ref, {"maxTrialCount": k}, None)
                continue
            status: dict[str, Any] = dict(cluster.get(ref).get("status") or {})
            lists = {
                key: list(status.get(key) or [])
                for key in ("runningTrialList", "succeededTrialList", "failedTrialList")
            }
            name = f"e{n}-t{k}"
            if op == "start":
                lists["runningTrialList"] = sorted({*lists["runningTrialList"], name})
            elif op in ("finish", "fail") and lists["runningTrialList"]:
                moved = lists["runningTrialList"].pop(k % len(lists["runningTrialList"]))
                target = "succeededTrialList" if op == "finish" else "failedTrialList"
                lists[target] = sorted([*lists[target], moved])
            status.update({key: value for key, value in lists.items() if value})
            for key, value in lists.items():
                if not value:
                    status.pop(key, None)
            if op == "drop":
                status.pop("succeededTrialList", None)
            elif op == "odd":
                status["failedTrialList"] = None if k % 2 else "not a list"
            status["trials"] = sum(len(v) for v in lists.values())
            cluster.update_status(ref, status, None)
        except ClusterError:
            pass


@given(OPS)
def test_the_lists_kept_as_splices_read_back_as_written(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int, int]]
) -> None:
    state_dir = tmp_path_factory.mktemp("state")
    durable, world = load(state_dir)
    memory = FakeCluster()
    apply(durable, ops)
    apply(memory, ops)
    again = read(state_dir)
    assert again.store.to_dict() == memory.store.to_dict()
    assert again.store.undo == memory.store.undo
    since = max(0, memory.cursor - WINDOW)
    assert again.changes_since(since) == memory.changes_since(since)
    world.cluster.store.journal.close()  # type: ignore[union-attr]
    reopened, other = load(state_dir)  # a writer continues the chains it finds
    apply(reopened, ops)
    apply(memory, ops)
    assert read(state_dir).store.to_dict() == memory.store.to_dict()
    other.cluster.store.journal.close()  # type: ignore[union-attr]


def test_a_write_stores_the_names_it_moved_not_the_lists(tmp_path: Path) -> None:
    cluster, world = load(tmp_path)
    apply(cluster, [("create", 0, 0)])
    for k in range(400):  # 400 names, each started then finished: 800 status writes
        apply(cluster, [("start", 0, k), ("finish", 0, 0)])
    succeeded = cluster.get(_ref(0))["status"]["succeededTrialList"]
    assert succeeded == sorted(f"e0-t{k}" for k in range(400))
    db = sqlite3.connect(tmp_path / STATE_FILE)
    biggest = db.execute("SELECT max(length(body)) FROM log").fetchone()[0]
    assert biggest < 1_000  # a row holds the Experiment without its lists
    (written,) = db.execute("SELECT sum(length(body)) FROM items").fetchone()
    # the chains still named by the window: at most two whole copies, and short splices
    assert written < 2 * len(str(succeeded)) + (WINDOW + REBASE) * 200
    held = db.execute(
        "SELECT l.items FROM objects o JOIN log l ON l.revision = o.revision "
        "WHERE o.kind = 'Experiment'"
    ).fetchone()[0]
    assert held <= REBASE  # reading it back replays a bounded number of splices
    assert read(tmp_path).get(_ref(0)) == cluster.get(_ref(0))
    world.cluster.store.journal.close()  # type: ignore[union-attr]


def test_names_that_land_far_apart_are_stored_as_themselves(tmp_path: Path) -> None:
    cluster, world = load(tmp_path)
    apply(cluster, [("create", 0, 0)])
    ref = _ref(0)
    many = [f"e0-a{k:03d}" for k in range(400)]
    status = {"succeededTrialList": many}
    cluster.update_status(ref, status, None)
    db = sqlite3.connect(tmp_path / STATE_FILE)
    (before,) = db.execute("SELECT sum(length(body)) FROM items").fetchone()
    moved = ["e0-a000x", "e0-a199x", "e0-a398x"]  # the first, middle and last of the list
    cluster.update_status(ref, {"succeededTrialList": sorted([*many, *moved])}, None)
    (after,) = db.execute("SELECT sum(length(body)) FROM items").fetchone()
    assert after - before < 3 * 60  # three splices of one name each, not the list between
    assert read(tmp_path).get(ref) == cluster.get(ref)
    world.cluster.store.journal.close()  # type: ignore[union-attr]
