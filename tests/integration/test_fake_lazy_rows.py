"""A state's Trials opened by their heads (``adapters.fake.lazy``): read back whole, upgraded
from a database without heads, and a damaged body refused when it is first read."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake import load
from katib_resume.adapters.fake.lazy import DamagedObject, Decoded, Undecoded
from katib_resume.adapters.fake.persistence import STATE_FILE, close, read
from katib_resume.adapters.fake.sqlite import FORMAT
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION

NS = "ns"
HEADED = (
    "SELECT count(*) FROM objects o JOIN log l ON l.revision = o.revision "
    "WHERE l.kind = 'Trial' AND l.head IS NOT NULL"
)


def _trial(i: int) -> dict[str, Any]:
    meta = {"name": f"t{i}", "namespace": NS, "labels": {"katib.kubeflow.org/experiment": "e"}}
    return {"apiVersion": API_VERSION, "kind": "Trial", "metadata": meta, "spec": {"i": i}}


def _ref(i: int) -> ObjectRef:
    return ObjectRef(API_VERSION, "Trial", NS, f"t{i}")


def _grown(state: Path, n: int) -> list[dict[str, Any]]:
    cluster, world = load(state)
    for i in range(n):
        cluster.create(_trial(i))
    cluster.update_status(_ref(0), {"phase": "done"}, None)
    close(world)
    return [read(state).get(_ref(i)) for i in range(n)]


def _sql(state: Path, *statements: str) -> list[Any]:
    db = sqlite3.connect(state / STATE_FILE)
    try:
        with db:
            return [db.execute(statement).fetchall() for statement in statements]
    finally:
        db.close()


def test_trials_are_opened_by_their_heads_and_read_back_whole(tmp_path: Path) -> None:
    written = _grown(tmp_path, 3)
    cluster, world = load(tmp_path)
    stored = cluster.store.find(_ref(1))
    assert type(stored) is Undecoded and stored["metadata"]["name"] == "t1"
    assert [cluster.get(_ref(i)) for i in range(3)] == written
    assert type(stored) is Decoded and stored == written[1]
    close(world)


def test_a_database_without_heads_gets_its_live_trials_heads_when_opened(tmp_path: Path) -> None:
    written = _grown(tmp_path, 3)
    _sql(
        tmp_path,
        "UPDATE log SET head = NULL",
        "ALTER TABLE log DROP COLUMN head",
        "UPDATE state SET format = 4",
    )
    assert read(tmp_path).get(_ref(2)) == written[2]  # a reader reads it as it is
    cluster, world = load(tmp_path)  # the heads are made as the database is upgraded
    assert type(cluster.store.find(_ref(2))) is Undecoded
    assert [cluster.get(_ref(i)) for i in range(3)] == written
    close(world)
    assert _sql(tmp_path, HEADED, "SELECT format FROM state") == [[(3,)], [(FORMAT,)]]


def test_a_damaged_trial_is_refused_when_first_read(tmp_path: Path) -> None:
    _grown(tmp_path, 2)
    _sql(tmp_path, "UPDATE log SET body = '{not json' WHERE kind = 'Trial' AND name = 't1'")
    cluster, world = load(tmp_path)
    assert cluster.store.find(_ref(1)) is not None
    with pytest.raises(DamagedObject, match="a stored Trial 't1' cannot be decoded"):
        cluster.get(_ref(1))
    assert cluster.get(_ref(0))["spec"] == {"i": 0}
    close(world)
