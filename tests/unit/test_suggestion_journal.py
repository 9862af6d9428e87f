"""The suggestion server's saves go to a journal beside the snapshot: what changed, appended."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.atomic import write_atomically
from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer, state_store
from katib_resume.adapters.local.suggestion import state as snapshot
from katib_resume.adapters.local.suggestion.cursor_delta import apply, diff
from katib_resume.adapters.local.suggestion.state import SearchState
from katib_resume.adapters.local.suggestion.state_store import JOURNAL_NAME, StateStore
from katib_resume.core.model import Experiment

LR = {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0.01", "max": "0.05"}}


def experiment() -> Experiment:
    spec = {"algorithm": {"algorithmName": "random"}, "parameters": [LR]}
    return Experiment.model_validate({"metadata": {"name": "exp", "namespace": "ns"}, "spec": spec})


def started(data_dir: Path | None) -> SuggestionServer:
    server = SuggestionServer(experiment(), 5, data_dir)
    server.start([])
    return server


def grow(server: SuggestionServer, calls: int, first: int = 30) -> list[Any]:
    """A first batch of ``first`` (the snapshot), then ``calls`` batches of one."""
    history = server.get_suggestions([], first)
    for _ in range(calls):
        history += server.get_suggestions(history, len(history) + 1)
    return history


def test_a_save_appends_to_the_journal_and_leaves_the_snapshot(tmp_path: Path) -> None:
    server = started(tmp_path)
    history = server.get_suggestions([], 40)  # a snapshot large enough for a few records
    first = (tmp_path / FILE_NAME).read_bytes()
    assert (tmp_path / JOURNAL_NAME).read_bytes().count(b"\n") == 1  # a header, no record
    history += server.get_suggestions(history, 41)
    history += server.get_suggestions(history, 43)
    assert (tmp_path / FILE_NAME).read_bytes() == first
    lines = (tmp_path / JOURNAL_NAME).read_bytes().splitlines()
    assert len(lines) == 3  # the header and one record per save
    bodies = [line.split(b" ", 2)[2] for line in lines[1:]]  # a cursor change, a tab, a batch
    assert [len(json.loads(body.split(b"\t")[1])) for body in bodies] == [1, 2]
    assert state_store.load(tmp_path / FILE_NAME).issued == tuple(history)


def test_the_bytes_written_grow_with_the_state_not_its_square(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[int] = []
    headers: list[int] = []  # a compaction's journal of no records
    real_pwrite = os.pwrite

    def atomic(path: Path, data: bytes) -> None:
        header = path.name == JOURNAL_NAME and data.count(b"\n") == 1
        (headers if header else written).append(len(data))
        write_atomically(path, data)

    def pwrite(descriptor: int, data: Any, offset: int) -> int:
        written.append(len(data))
        return real_pwrite(descriptor, data, offset)

    monkeypatch.setattr(state_store, "write_atomically", atomic)
    monkeypatch.setattr(os, "pwrite", pwrite)
    grow(started(tmp_path), 999, first=1)  # past FLOOR: compactions too
    final = (tmp_path / FILE_NAME).stat().st_size + (tmp_path / JOURNAL_NAME).stat().st_size
    assert len(written) == 1000  # one write a save: a record, or a compaction's snapshot
    assert 0 < len(headers) < 20  # each compaction's journal header
    assert sum(written) + sum(headers) < 10 * final  # whole rewrites: about 500 times it


def test_a_restore_applies_at_most_records_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal's size alone would let thousands of small records pile up (each applied by
    a Python call at restore): past ``RECORDS`` a save compacts, whatever the bytes."""
    monkeypatch.setattr(state_store, "RECORDS", 5)
    monkeypatch.setattr(StateStore.__init__, "__defaults__", (state_store.GROWTH, 10**9, 5))
    server = started(tmp_path)
    history = grow(server, 14)  # the sixth and the twelfth save compact: five records each
    lines = (tmp_path / JOURNAL_NAME).read_bytes().splitlines()
    assert len(lines) == 1 + 2  # the header and the two saves since the last compaction
    assert state_store.load(tmp_path / FILE_NAME).issued == tuple(history)
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    assert restarted.start(history).source == "restored"
    assert restarted.get_suggestions(history, len(history) + 1) == server.get_suggestions(
        history, len(history) + 1
    )


def test_a_growing_cursor_is_journaled_by_what_it_gains(tmp_path: Path) -> None:
    store = StateStore(tmp_path / FILE_NAME, growth=10**6)
    state = SearchState("ns/exp", "tpe", 1, "space", cursor={"told": {}, "unknown": 0})
    store.save(state)
    for index in range(200):
        told = {**state.cursor["told"], str(index): index / 7}
        state = SearchState("ns/exp", "tpe", 1, "space", cursor={**state.cursor, "told": told})
        store.save(state)
    lines = (tmp_path / JOURNAL_NAME).read_bytes().splitlines()
    assert max(map(len, lines[1:])) < 160  # one result each, not all of them
    assert snapshot.encode(state_store.load(tmp_path / FILE_NAME)) == snapshot.encode(state)


def test_a_torn_last_record_is_a_save_that_never_happened(tmp_path: Path) -> None:
    server = started(tmp_path)
    history = server.get_suggestions([], 30)
    history += server.get_suggestions(history, 31)
    journal = tmp_path / JOURNAL_NAME
    before = journal.read_bytes()
    server.get_suggestions(history, 33)  # its response never reaches the controller
    journal.write_bytes(journal.read_bytes()[: len(before) + 20])  # the crash, mid-append
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    report = restarted.start(history)
    assert report.source == "restored"
    assert restarted.issued == tuple(history)
    again = restarted.get_suggestions(history, 33)
    assert again == started(None).get_suggestions([], 33)[31:]
    assert state_store.load(tmp_path / FILE_NAME).issued == tuple(history + again)


def test_a_damaged_record_before_the_last_is_rebuilt_and_kept_aside(tmp_path: Path) -> None:
    server = started(tmp_path)
    history = grow(server, 4)
    journal = tmp_path / JOURNAL_NAME
    lines = journal.read_bytes().splitlines(keepends=True)
    assert len(lines) >= 3
    lines[1] = lines[1].replace(b"exp-", b"exq-")
    journal.write_bytes(b"".join(lines))
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    report = restarted.start(history)
    assert report.source == "rebuilt"
    assert report.reason == (
        "suggestion state corrupt (journal record 1 is damaged, later ones follow):"
        " rebuilt by replaying 34 assignments; the old files are kept as"
        f" {FILE_NAME}.discarded and {JOURNAL_NAME}.discarded"
    )
    assert restarted.issued == tuple(history)
    assert state_store.load(tmp_path / FILE_NAME).issued == tuple(history)


def test_two_records_joined_by_a_damaged_line_break_are_a_problem_not_a_torn_save(
    tmp_path: Path,
) -> None:
    """A flipped line break joins the last two records into one line that ends the file: not
    what a crash leaves (a torn append has no line break), so not dropped as one, which would
    lose two saves unsaid, but reported, and the state rebuilt from the history."""
    server = started(tmp_path)
    history = grow(server, 3)
    journal = tmp_path / JOURNAL_NAME
    lines = journal.read_bytes().splitlines(keepends=True)
    assert len(lines) >= 3
    lines[-2] = lines[-2][:-1] + b"\x0b"
    journal.write_bytes(b"".join(lines))
    with pytest.raises(snapshot.StateProblem) as problem:
        state_store.load(tmp_path / FILE_NAME)
    assert problem.value.kind == "corrupt"
    assert problem.value.detail == f"journal record {len(lines) - 2} is damaged"
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    report = restarted.start(history)
    assert report.source == "rebuilt"
    assert restarted.issued == tuple(history)


def test_a_journal_of_another_version_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    server = started(tmp_path)
    history = grow(server, 3)
    journal = tmp_path / JOURNAL_NAME
    journal.write_bytes(journal.read_bytes().replace(b"journal 2 ", b"journal 9 ", 1))
    report = SuggestionServer(experiment(), 5, tmp_path).start(history)
    assert report.source == "rebuilt"
    assert "suggestion state corrupt (unsupported journal version '9')" in report.reason


def test_a_failed_append_leaves_the_journal_and_the_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = started(tmp_path)
    history = grow(server, 3)
    journal = tmp_path / JOURNAL_NAME
    before = journal.read_bytes()
    real_fsync = os.fsync

    def fail(descriptor: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        server.get_suggestions(history, 35)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert journal.read_bytes() == before
    assert server.issued == tuple(history)
    assert server.get_suggestions(history, 35) == started(None).get_suggestions([], 35)[33:]
    assert len(state_store.load(tmp_path / FILE_NAME).issued) == 35


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=12,
)


@given(old=json_values, new=json_values, grown=json_values)
def test_a_delta_turns_the_old_cursor_into_the_new_one(old: Any, new: Any, grown: Any) -> None:
    """Any two JSON values, and a value grown from another as the searches grow theirs."""
    wider = {**old, "extra": grown} if isinstance(old, dict) else [old, grown]
    for before, after in ((old, new), (old, wider), ({"k": old}, {"k": wider})):
        delta = json.loads(snapshot.canonical(diff(before, after)))  # as read back
        restored = apply(copy.deepcopy(before), delta)
        assert snapshot.canonical(restored) == snapshot.canonical(after)


def test_a_snapshot_alone_as_written_before_the_journal_is_resumed(tmp_path: Path) -> None:
    server = started(tmp_path)
    history = server.get_suggestions([], 30)
    history += server.get_suggestions(history, 31)
    saved = state_store.load(tmp_path / FILE_NAME)
    for path in tmp_path.iterdir():
        path.unlink()
    (tmp_path / FILE_NAME).write_bytes(snapshot.encode(saved))  # one file, version 2
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    assert restarted.start(history).source == "restored"
    history += restarted.get_suggestions(history, 33)
    assert history == started(None).get_suggestions([], 33)
    assert (tmp_path / FILE_NAME).read_bytes() == snapshot.encode(saved)  # a record appended
    assert state_store.load(tmp_path / FILE_NAME).issued == tuple(history)
