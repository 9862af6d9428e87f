"""The fake cluster on SQLite: the same cluster as in memory after any sequence of writes, a
bounded log, readers beside a writer, and the previous format migrated once, never lost."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake import FakeCluster, FakeWorld, StateFileError, load
from katib_resume.adapters.fake.pages import PAGE
from katib_resume.adapters.fake.persistence import (
    LEGACY_FILE,
    MIGRATED_FILE,
    STATE_FILE,
    close,
    read,
    world_state,
)
from katib_resume.adapters.fake.sqlite import FORMAT, WINDOW, connect, transaction
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.ports import ClusterError
from tests.integration.test_fake_world import NS, deployment, pvc

Op = tuple[str, int]
OPS = st.lists(
    st.tuples(
        st.sampled_from(["create", "status", "finalize", "unfinalize", "delete"]), st.integers(0, 3)
    ),
    max_size=40,
)


def legacy_state(state_dir: Path) -> Path:
    """A state directory in the previous format: one ``cluster.json``, one Deployment in it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    cluster = FakeCluster()
    world = FakeWorld(cluster, state_dir / "volumes", 2)
    cluster.create(deployment(None))
    cluster.record_event(ObjectRef.of(deployment()), "Normal", "Created", "created it")
    world.tick()
    data = {
        "format": 1,
        **world_state(world),
        "store": cluster.store.to_dict(),
        "events": [e.to_dict() for e in cluster.events],
    }
    path = state_dir / LEGACY_FILE
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def apply(cluster: FakeCluster, ops: list[Op]) -> None:
    """Writes of every kind, some refused (a missing object, a finalizer on a deleting one)."""
    for op, n in ops:
        ref = ObjectRef("apps/v1", "Deployment", NS, f"d{n}")
        try:
            if op == "create":
                cluster.create(deployment(None) | {"metadata": {"name": ref.name, "namespace": NS}})
            elif op == "status":
                cluster.update_status(ref, {"seen": len(cluster.events)}, None)
                cluster.record_event(ref, "Normal", "Seen", op)
            elif op in ("finalize", "unfinalize"):
                cluster.set_finalizers(ref, ["x"] if op == "finalize" else [], None)
            else:
                cluster.delete(ref, "")
        except ClusterError:
            pass


@given(OPS)
def test_the_store_on_disk_is_the_store_in_memory(
    tmp_path_factory: pytest.TempPathFactory, ops: list[Op]
) -> None:
    state_dir = tmp_path_factory.mktemp("state")
    durable, world = load(state_dir)
    memory = FakeCluster()
    apply(durable, ops)
    apply(memory, ops)
    again = read(state_dir)  # another process's view, the writer still open
    for cluster in (durable, again):
        assert cluster.store.to_dict() == memory.store.to_dict()
        assert cluster.events == memory.events
    assert again.changes_since(max(0, memory.cursor - WINDOW)) == memory.changes_since(
        max(0, memory.cursor - WINDOW)
    )
    close(world)


def test_the_log_stays_bounded_whatever_the_history(tmp_path: Path) -> None:
    cluster, _ = load(tmp_path)
    cluster.create(pvc())
    ref = ObjectRef("apps/v1", "Deployment", NS, "d")
    cluster.create(deployment(None) | {"metadata": {"name": "d", "namespace": NS}})
    for n in range(3 * WINDOW):
        cluster.update_status(ref, {"n": n}, None)
    db = sqlite3.connect(tmp_path / STATE_FILE)
    (rows,) = db.execute("SELECT count(*) FROM log").fetchone()
    assert rows <= WINDOW + 2  # the window, plus the claim's creation (live) and the undo
    assert read(tmp_path).get(ObjectRef.of(pvc()))["metadata"]["resourceVersion"] == "1"


def test_the_log_says_whether_a_kind_was_written_since_a_revision_within_its_window(
    tmp_path: Path,
) -> None:
    """``written_since``: a write of the kind in the namespace after the revision, and only
    that, says yes; a revision the window has passed says yes too (the log cannot say no)."""
    cluster, _ = load(tmp_path)
    journal = cluster.store.journal
    assert journal is not None
    ref = ObjectRef("apps/v1", "Deployment", NS, "d")
    cluster.create(deployment(None) | {"metadata": {"name": "d", "namespace": NS}})
    then = cluster.store.version
    cluster.create(pvc())  # another kind
    assert not journal.written_since(then, "Deployment", NS)
    cluster.update_status(ref, {"n": 0}, None)
    assert journal.written_since(then, "Deployment", NS)
    assert not journal.written_since(then, "Deployment", "elsewhere")
    now = cluster.store.version
    assert not journal.written_since(now, "Deployment", NS)
    for n in range(WINDOW + 1):
        cluster.create(pvc() | {"metadata": {"name": f"c{n}", "namespace": NS}})
    assert not journal.written_since(now + 1, "Deployment", NS)  # the oldest the window holds
    assert journal.written_since(now, "Deployment", NS)  # the window passed its next row


def test_a_reader_sees_each_write_as_it_is_committed(tmp_path: Path) -> None:
    cluster, _ = load(tmp_path)
    assert read(tmp_path).list("apps/v1", "Deployment", NS, {}) == []
    cluster.create(deployment(None))
    assert len(read(tmp_path).list("apps/v1", "Deployment", NS, {})) == 1


def test_the_previous_format_is_migrated_once_and_kept(tmp_path: Path) -> None:
    legacy_state(tmp_path)
    seen = read(tmp_path)  # a reader does not migrate
    assert (tmp_path / LEGACY_FILE).exists() and not (tmp_path / STATE_FILE).exists()
    cluster, world = load(tmp_path)
    assert cluster.store.to_dict() == seen.store.to_dict() and cluster.events == seen.events
    assert world.ticks == 1 and world.ready_after_ticks == 2
    assert not (tmp_path / LEGACY_FILE).exists() and (tmp_path / MIGRATED_FILE).exists()
    cluster.create(pvc())
    assert len(read(tmp_path).store.all()) == 2  # the database is the state from now on


@pytest.mark.parametrize("content", [b"{not json", b'{"format": 99}'])
def test_an_unreadable_previous_state_is_refused_with_how_to_start_over(
    tmp_path: Path, content: bytes
) -> None:
    (tmp_path / LEGACY_FILE).write_bytes(content)
    with pytest.raises(StateFileError, match="to start over, move the state directory away"):
        load(tmp_path)
    assert (tmp_path / LEGACY_FILE).read_bytes() == content
    assert not (tmp_path / STATE_FILE).exists()


SUGGESTION_OPS = st.lists(
    st.tuples(
        st.sampled_from(["create", "append", "append", "rewrite", "shrink", "delete"]),
        st.integers(0, 1),
        st.integers(1, 3),
    ),
    max_size=40,
)


def assignment(n: int, tag: str = "") -> dict[str, object]:
    return {"name": f"t{n}{tag}", "parameterAssignments": [{"name": "lr", "value": str(n)}]}


def apply_suggestions(cluster: FakeCluster, ops: list[tuple[str, int, int]]) -> None:
    """Status writes that append to a Suggestion's assignments, or change them otherwise."""
    for op, n, k in ops:
        ref = ObjectRef(API_VERSION, "Suggestion", NS, f"s{n}")
        try:
            if op == "create":
                cluster.create(
                    {
                        "apiVersion": API_VERSION,
                        "kind": "Suggestion",
                        "metadata": {"name": ref.name, "namespace": NS},
                        "spec": {},
                    }
                )
                continue
            if op == "delete":
                cluster.delete(ref, "")
                continue
            have = list((cluster.get(ref).get("status") or {}).get("suggestions") or [])
            if op == "append":
                have += [assignment(len(have) + i) for i in range(k)]
            elif op == "rewrite" and have:
                have[0] = assignment(0, "again")
            elif op == "shrink":
                have = have[:-1]
            cluster.update_status(ref, {"suggestions": have, "suggestionCount": len(have)}, None)
        except ClusterError:
            pass


@given(SUGGESTION_OPS)
def test_a_list_kept_as_side_rows_reads_back_as_written(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int, int]]
) -> None:
    """Every revision still in the window, the undo and the live objects read back as they were
    written, whether a write extended the list (new side rows only) or changed it otherwise."""
    state_dir = tmp_path_factory.mktemp("state")
    durable, world = load(state_dir)
    memory = FakeCluster()
    apply_suggestions(durable, ops)
    apply_suggestions(memory, ops)
    again = read(state_dir)
    assert again.store.to_dict() == memory.store.to_dict()
    assert again.store.undo == memory.store.undo
    close(world)
    reopened, other = load(state_dir)  # a writer continues the chains it finds
    apply_suggestions(reopened, ops)
    apply_suggestions(memory, ops)
    assert read(state_dir).store.to_dict() == memory.store.to_dict()
    other.cluster.store.journal.close()  # type: ignore[union-attr]


def test_a_growing_list_writes_only_its_new_items_and_old_chains_go(tmp_path: Path) -> None:
    cluster, _ = load(tmp_path)
    apply_suggestions(cluster, [("create", 0, 1), ("append", 0, 3), ("rewrite", 0, 1)])
    db = sqlite3.connect(tmp_path / STATE_FILE)
    counted = "SELECT count(*), sum(1 + length(body) - length(replace(body, char(10), ''))) "
    rows, items = db.execute(counted + "FROM items").fetchone()
    assert (rows, items) == (2, 3 + 3)  # the first chain and the one the rewrite started
    apply_suggestions(cluster, [("append", 0, 1)] * (2 * WINDOW))
    rows, items = db.execute(counted + "FROM items").fetchone()
    assert items == 3 + 2 * WINDOW  # the first chain went with its rows
    assert rows == -(-items // PAGE)  # 200 appends of one item: full pages and a last
    biggest = db.execute("SELECT max(length(body)) FROM log").fetchone()[0]
    assert biggest < 1_000  # a row holds the Suggestion without its assignments


def test_a_database_of_the_previous_format_is_read_and_upgraded(tmp_path: Path) -> None:
    cluster, world = load(tmp_path)
    apply_suggestions(cluster, [("create", 0, 1), ("append", 0, 2)])
    close(world)
    db = sqlite3.connect(tmp_path / STATE_FILE)
    inline = [
        (json.dumps(obj), rev)
        for rev, obj in (
            (int(o["metadata"]["resourceVersion"]), o) for o in read(tmp_path).store.all()
        )
    ]
    db.executescript("DROP INDEX log_by_chain; DELETE FROM items;")
    db.executemany("UPDATE log SET body = ? WHERE revision = ?", inline)
    db.execute("DELETE FROM log WHERE revision NOT IN (SELECT revision FROM objects)")
    db.executescript(
        "ALTER TABLE log DROP COLUMN chain; ALTER TABLE log DROP COLUMN items; "
        "DROP TABLE items; UPDATE state SET format = 2, undo_revision = NULL;"
    )
    db.commit()
    db.close()
    expected = [len(s["status"]["suggestions"]) for s in read(tmp_path).store.all()]
    assert expected == [2]
    cluster, _ = load(tmp_path)
    apply_suggestions(cluster, [("append", 0, 1)])
    suggestion = read(tmp_path).get(ObjectRef(API_VERSION, "Suggestion", NS, "s0"))
    assert [a["name"] for a in suggestion["status"]["suggestions"]] == ["t0", "t1", "t2"]
    (form,) = sqlite3.connect(tmp_path / STATE_FILE).execute("SELECT format FROM state").fetchone()
    assert form == FORMAT


def test_a_format_7_chain_an_item_a_row_is_read_as_it_is_and_continued(tmp_path: Path) -> None:
    """Format 7 kept an item to a row: a reader reads it unchanged, a writer marks the database
    8 and fills the chain's last row, and every list reads back as in memory."""
    cluster, world = load(tmp_path)
    memory = FakeCluster()
    ops = [("create", 0, 0), ("append", 0, 5), ("create", 1, 0), ("append", 1, 2)]
    apply_suggestions(cluster, ops)
    apply_suggestions(memory, ops)
    close(world)
    db = sqlite3.connect(tmp_path / STATE_FILE)
    paged = db.execute("SELECT chain, idx, body FROM items").fetchall()
    single = [(c, i + k, t) for c, i, b in paged for k, t in enumerate(b.split("\n"))]
    db.execute("DELETE FROM items")
    db.executemany("INSERT INTO items VALUES (?, ?, ?)", single)
    db.execute("UPDATE state SET format = 7")
    db.commit()
    assert read(tmp_path).store.to_dict() == memory.store.to_dict()
    assert db.execute("SELECT format, (SELECT count(*) FROM items) FROM state").fetchone() == (7, 7)
    cluster, world = load(tmp_path)
    more = [("append", 0, 1), ("append", 1, PAGE)]
    apply_suggestions(cluster, more)
    apply_suggestions(memory, more)
    close(world)
    assert read(tmp_path).store.to_dict() == memory.store.to_dict()
    rows = db.execute("SELECT format, (SELECT count(*) FROM items) FROM state").fetchone()
    assert rows == (FORMAT, 5 + 2 + 1)  # the last rows filled (s0's by 1, s1's by 63), one more
    db.close()


def test_a_transaction_an_interrupt_left_open_does_not_block_the_next(tmp_path: Path) -> None:
    """A ``KeyboardInterrupt`` (Ctrl-C, SIGTERM, SIGHUP) can land right after ``BEGIN``; the
    stopping command's last commit must still happen, and the interrupted write must not."""
    db = connect(tmp_path / "t.db")
    db.execute("CREATE TABLE t (x INTEGER)")
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO t VALUES (1)")  # the interrupted write, never committed
    with transaction(db):
        db.execute("INSERT INTO t VALUES (2)")
    with pytest.raises(KeyboardInterrupt), transaction(db):
        db.execute("INSERT INTO t VALUES (3)")
        raise KeyboardInterrupt
    db.close()
    reread = sqlite3.connect(tmp_path / "t.db")
    assert reread.execute("SELECT x FROM t").fetchall() == [(2,)]
    reread.close()


@pytest.mark.parametrize("body", ["[1, 2]", '"text"', "{not json"])
def test_a_stored_object_that_is_not_one_is_refused_with_how_to_start_over(
    tmp_path: Path, body: str
) -> None:
    cluster, world = load(tmp_path)
    cluster.create(deployment(None))
    close(world)
    db = sqlite3.connect(tmp_path / STATE_FILE)
    with db:
        db.execute("UPDATE log SET body = ? WHERE kind = 'Deployment'", (body,))
    db.close()
    with pytest.raises(StateFileError, match="to start over, move the state directory away"):
        load(tmp_path)


def test_a_transaction_left_open_by_an_interrupt_closes_quietly_after_its_connection(
    tmp_path: Path,
) -> None:
    """Ctrl-C between entering a transaction and the ``with`` taking hold leaves its generator
    to be closed when collected, perhaps after the connection; closing it then must not raise
    (the closed connection already discarded what was open), and nothing was committed."""
    path = tmp_path / "t.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE t (x)")
    entered = transaction(db)
    entered.__enter__()
    db.execute("INSERT INTO t VALUES (1)")
    db.close()
    entered.gen.close()  # what the collector does
    assert sqlite3.connect(path).execute("SELECT count(*) FROM t").fetchone() == (0,)
