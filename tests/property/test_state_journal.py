"""The suggestion state's snapshot and journal restore exactly the last save that completed.

For any sequence of saves (new batches with cursors of every shape the searches write, saves
that are no extension of the last, compactions at any journal size), crashes in the middle of
an append (the journal cut at any byte of its last record), crashes after any file operation
of a save (a compaction's removal of a stale journal, its snapshot, its new journal; an
append), each followed by a restart, and restarts, a restore gives the state of the last
save that completed, byte for byte in its canonical encoding; and a byte flipped anywhere in
the journal but its last record is a ``StateProblem``, never a silently different state.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any
from unittest import mock

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from katib_resume.adapters.atomic import write_atomically
from katib_resume.adapters.local.suggestion import state as snapshot
from katib_resume.adapters.local.suggestion import state_store
from katib_resume.adapters.local.suggestion.assignments import assignment
from katib_resume.adapters.local.suggestion.state import SearchState, StateProblem
from katib_resume.adapters.local.suggestion.state_store import JOURNAL_NAME, StateStore

START = SearchState("ns/exp", "tpe", 7, "space-fingerprint", cursor=0)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)


@st.composite
def next_cursor(draw: st.DrawFn, old: Any, index: int) -> Any:
    """A cursor after ``old``, built as the searches build theirs: shared entries, grown dicts
    and lists, replaced values (of another type, too), or a cursor of another shape."""
    move = draw(st.sampled_from(["grow", "grow", "grow", "replace", "reshape", "same"]))
    if move == "same" or (move != "reshape" and not isinstance(old, dict)):
        return old if move == "same" else draw(scalars)
    if move == "reshape":
        return draw(st.one_of(scalars, st.just({"told": {}, "parents": [], "attrs": {}, "n": 0})))
    new = {**old}
    key = draw(st.sampled_from(sorted(new)))
    if move == "replace":
        new[key] = draw(scalars)
    elif isinstance(new[key], dict):
        added = {str(index + i): draw(scalars) for i in range(draw(st.integers(0, 3)))}
        new[key] = {**new[key], **added}
    elif isinstance(new[key], list):
        new[key] = [*new[key], *draw(st.lists(scalars, max_size=3))]
    else:
        new[key] = draw(scalars)
    return new


@st.composite
def next_state(draw: st.DrawFn, old: SearchState) -> SearchState:
    """``old`` with a batch more, or (now and then) re-synchronised on a shorter history."""
    issued = old.issued
    if issued and draw(st.integers(0, 9)) == 0:
        issued = issued[: draw(st.integers(0, len(issued) - 1))]
    count = draw(st.integers(0, 3))
    values = draw(st.lists(st.text(max_size=6), min_size=count, max_size=count))
    batch = tuple(
        assignment(f"exp-{len(issued) + i}", (("lr", value),)) for i, value in enumerate(values)
    )
    cursor = draw(next_cursor(old.cursor, len(issued)))
    return replace(old, cursor=cursor, issued=issued + batch)


def same(a: SearchState, b: SearchState) -> bool:
    """Equal as saved: their canonical encodings (``1``, ``1.0`` and ``True`` differ)."""
    return snapshot.encode(a) == snapshot.encode(b)


steps = st.sampled_from(["save", "save", "torn append", "torn append", "crash mid-save", "restart"])
Files = tuple[bytes | None, bytes | None]
"""What the volume holds: the snapshot's bytes and the journal's (``None``: no such file)."""


def files(path: Path) -> Files:
    journal = path.with_name(JOURNAL_NAME)
    return tuple(p.read_bytes() if p.exists() else None for p in (path, journal))  # type: ignore[return-value]


def put(path: Path, held: Files) -> None:
    for file, content in zip((path, path.with_name(JOURNAL_NAME)), held, strict=True):
        if content is None:
            file.unlink(missing_ok=True)
        else:
            file.write_bytes(content)


def saved_step_by_step(store: StateStore, state: SearchState) -> list[Files]:
    """``store.save(state)``, and what the volume held after each of its file operations (a
    file replaced atomically, removed, or a record appended), the first entry before any: each
    is what a crash right after that operation leaves."""
    path = store.path
    seen = [files(path)]
    real_write, real_unlink, real_append = write_atomically, os.unlink, StateStore._append

    def write(file: Path, data: bytes) -> None:
        real_write(file, data)
        seen.append(files(path))

    def unlink(file: Any, *args: Any, **kwargs: Any) -> None:
        real_unlink(file, *args, **kwargs)
        seen.append(files(path))

    def append(self: StateStore, at: int, line: bytes) -> bool:
        done = real_append(self, at, line)
        seen.append(files(path))
        return done

    with (
        mock.patch.object(state_store, "write_atomically", write),
        mock.patch.object(os, "unlink", unlink),
        mock.patch.object(StateStore, "_append", append),
    ):
        store.save(state)
    return seen


@settings(deadline=None, max_examples=150)
@given(
    growth=st.sampled_from([0.5, 1, 3, 50]),
    records=st.sampled_from([1, 2, 5, 256]),
    plan=st.lists(steps, min_size=8, max_size=30),
    data=st.data(),
)
def test_a_restore_gives_the_last_save_that_completed(
    growth: float, records: int, plan: list[str], data: st.DataObject
) -> None:
    with TemporaryDirectory() as directory:
        path = Path(directory) / snapshot.FILE_NAME
        journal = path.with_name(JOURNAL_NAME)
        store, saved = StateStore(path, growth, floor=0, records=records), START
        store.save(saved)
        for step in plan:
            new = data.draw(next_state(saved), label="state")
            before = journal.read_bytes() if journal.exists() else None
            if step == "restart":
                store = StateStore(path, growth, floor=0, records=records)
                assert same(store.load(), saved)
                continue
            if step == "crash mid-save":
                held = saved_step_by_step(store, new)
                if held[0][0] != held[-1][0]:
                    event("a crash mid-compaction")
                for crash in held:  # every moment a crash can leave
                    put(path, crash)
                    restored = StateStore(path, growth, floor=0, records=records).load()
                    assert same(restored, saved) or same(restored, new)
                assert same(restored, new)  # the save completed
                store = StateStore(
                    path, growth, floor=0, records=records
                )  # restarted after the last crash
                store.load()
                saved = new
                continue
            store.save(new)
            after = journal.read_bytes() if journal.exists() else None
            appended = before is not None and after is not None and len(after) > len(before)
            if step == "torn append" and appended and after is not None and before is not None:
                event("a torn append")
                cut = data.draw(st.integers(len(before), len(after) - 1), label="cut")
                journal.write_bytes(after[:cut])  # the crash: that save did not complete
                store = StateStore(path, growth, floor=0, records=records)
                assert same(store.load(), saved)
                continue
            saved = new
            assert same(StateStore(path, growth, floor=0, records=records).load(), saved)
        assert same(StateStore(path, growth, floor=0, records=records).load(), saved)


def _journaled(path: Path, saves: int, data: st.DataObject) -> list[SearchState]:
    """``START`` and ``saves`` drawn states after it, each saved as a journal record (the
    snapshot never rewritten); the states, in order."""
    store, states = StateStore(path, growth=10**6, floor=0), [START]
    store.save(START)
    for _ in range(saves):
        states.append(data.draw(next_state(states[-1]), label="state"))
        store.save(states[-1])
    return states


@settings(deadline=None, max_examples=100)
@given(saves=st.integers(2, 12), data=st.data())
def test_a_byte_flipped_before_the_last_record_is_a_problem(
    saves: int, data: st.DataObject
) -> None:
    with TemporaryDirectory() as directory:
        path = Path(directory) / snapshot.FILE_NAME
        journal = path.with_name(JOURNAL_NAME)
        _journaled(path, saves, data)
        lines = journal.read_bytes().splitlines(keepends=True) if journal.exists() else []
        if len(lines) < 3:  # the header and one record: nothing before the last
            return
        data_ = bytearray(b"".join(lines))
        last = len(data_) - len(lines[-1])
        at = data.draw(st.integers(0, last - 1), label="at")
        data_[at] ^= data.draw(st.integers(1, 255), label="bits")
        journal.write_bytes(bytes(data_))
        with pytest.raises(StateProblem) as problem:
            StateStore(path).load()
        assert problem.value.kind == "corrupt"


@settings(deadline=None, max_examples=60)
@given(saves=st.integers(1, 8), data=st.data())
def test_a_damaged_last_record_is_that_save_lost_or_a_problem(
    saves: int, data: st.DataObject
) -> None:
    """A last record damaged rather than torn is reported, unless the damage is to its line
    break, its last byte: then it reads as a torn append and is dropped like one (that save
    lost); never read as some other state."""
    with TemporaryDirectory() as directory:
        path = Path(directory) / snapshot.FILE_NAME
        journal = path.with_name(JOURNAL_NAME)
        states = _journaled(path, saves, data)
        if not journal.exists():
            return
        content = bytearray(journal.read_bytes())
        last = len(content) - len(content.splitlines(keepends=True)[-1])
        at = data.draw(st.integers(last, len(content) - 1), label="at")
        content[at] ^= data.draw(st.integers(1, 255), label="bits")
        journal.write_bytes(bytes(content))
        torn = at == len(content) - 1  # its line break is gone
        try:
            restored = StateStore(path).load()
        except StateProblem as problem:
            assert problem.kind == "corrupt" and not torn
        else:
            assert torn and same(restored, states[-2])
