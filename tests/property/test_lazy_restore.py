"""A restore given the controller's history equals the restore that parses every assignment.

``StateStore.load(history)`` leaves unparsed the saved assignments the history already holds
(``unparsed.py``): for any sequence of saves (batches, re-synchronisations, compactions) and any
history (a prefix of the saved assignments, parsed anew as a controller's copies are, or one
that differs from them: a value changed, a key added, longer than they are), it gives the
state the whole parse gives, byte for byte in its canonical encoding; where the history is a
prefix that the two encoders write alike, the state holds the history's own items, and the
store says it proved the history to be where the saved assignments start (``proved``, which
spares the server its own comparison), which it says of no other history. A byte flipped in
the assignments it does not parse is still a ``StateProblem``. Stored texts are compared a chunk
at a time (``unparsed.CHUNK``): with chunks of one, two or three texts, so that every history
crosses their boundaries, the same histories are proved and the same states given.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.fake.codec import encode
from katib_resume.adapters.local.suggestion import state as snapshot
from katib_resume.adapters.local.suggestion import unparsed
from katib_resume.adapters.local.suggestion.assignments import assignment
from katib_resume.adapters.local.suggestion.prefix import holds
from katib_resume.adapters.local.suggestion.state import SearchState, StateProblem
from katib_resume.adapters.local.suggestion.state_store import JOURNAL_NAME, StateStore
from tests.property.test_state_journal import START, next_state, same

Manifest = dict[str, Any]


def _saved(path: Path, saves: int, growth: float, data: st.DataObject) -> SearchState:
    """``saves`` drawn states saved in turn (records, and compactions as ``growth`` says),
    their values now and then made printable ASCII (which both encoders write alike); the
    last."""
    store, state = StateStore(path, growth, floor=0), START
    printable = data.draw(st.booleans(), label="printable")
    store.save(state)
    for _ in range(saves):
        state = data.draw(next_state(state), label="state")
        if printable:
            state = replace(state, issued=tuple(map(_printable, state.issued)))
        store.save(state)
    return state


def _printable(item: Manifest) -> Manifest:
    values = [
        (v["name"], "".join(c if c.isalnum() and c.isascii() else "-" for c in v["value"]))
        for v in item["parameterAssignments"]
    ]
    return assignment(item["name"], tuple(values))


@st.composite
def histories(draw: st.DrawFn, issued: tuple[Manifest, ...]) -> list[Manifest]:
    """What a controller may send: a prefix of ``issued``, parsed anew, or one changed."""
    history: list[Manifest] = json.loads(json.dumps(issued[: draw(st.integers(0, len(issued)))]))
    change = draw(st.sampled_from(["none"] * 4 + ["value", "labels", "longer"]))
    if change == "longer":
        history.append({"name": "exp-other", "parameterAssignments": []})
    elif history and change != "none":
        item = history[draw(st.integers(0, len(history) - 1))]
        if change == "value":
            item["parameterAssignments"] = [{"name": "lr", "value": "changed"}]
        else:
            item["labels"] = {"a": "b"}
    return history


def _ascii(items: list[Manifest]) -> bool:
    """Whether both encoders write ``items`` alike (printable ASCII, nothing escaped)."""
    text = json.dumps(items)
    return text.isascii() and "\\" not in text


@settings(deadline=None, max_examples=150)
@given(saves=st.integers(0, 12), growth=st.sampled_from([0.5, 3, 10**6]), data=st.data())
def test_a_restore_given_the_history_equals_the_whole_parse(
    saves: int, growth: float, data: st.DataObject
) -> None:
    with TemporaryDirectory() as directory:
        path = Path(directory) / snapshot.FILE_NAME
        saved = _saved(path, saves, growth, data)
        history = data.draw(histories(saved.issued), label="history")
        whole = StateStore(path).load()
        store = StateStore(path)
        given_history = store.load(history)
        assert same(whole, saved) and same(given_history, saved)
        if store.proved is not None:  # the server then compares nothing (``_unusable``)
            assert store.proved is history and holds(history, whole.issued)
        prefix = history == list(saved.issued[: len(history)])
        if prefix and history and _ascii(history):
            event("the history's own items")
            assert all(map(lambda a, b: a is b, given_history.issued, history))
            assert store.proved is history


def _issued_region(content: bytes) -> tuple[int, int]:
    """Where a snapshot's assignments stand in its bytes (between their brackets)."""
    start = content.rfind(b',"issued":[') + len(b',"issued":[')
    return start, content.rfind(b'],"seed":')


@settings(deadline=None, max_examples=100)
@given(saves=st.integers(1, 10), data=st.data())
def test_a_byte_flipped_in_assignments_left_unparsed_is_a_problem(
    saves: int, data: st.DataObject
) -> None:
    """Flipped in the snapshot's assignments that the history holds (never parsed), or in a
    journal record before the last (whose assignments the history holds too)."""
    with TemporaryDirectory() as directory:
        path = Path(directory) / snapshot.FILE_NAME
        saved = _saved(path, saves, data.draw(st.sampled_from([0.5, 10**6])), data)
        journal = path.with_name(JOURNAL_NAME)
        start, end = _issued_region(path.read_bytes())
        lines = journal.read_bytes().splitlines(keepends=True) if journal.exists() else []
        target = path if end > start and (len(lines) < 3 or data.draw(st.booleans())) else journal
        if target == journal and len(lines) < 3:
            return
        content = bytearray(target.read_bytes())
        if target == path:
            at = data.draw(st.integers(start, end - 1), label="at")
        else:
            at = data.draw(st.integers(len(lines[0]), len(content) - len(lines[-1]) - 1))
        content[at] ^= data.draw(st.integers(1, 255), label="bits")
        target.write_bytes(bytes(content))
        event(f"flipped in the {target.name}")
        with pytest.raises(StateProblem) as problem:
            StateStore(path).load(json.loads(json.dumps(saved.issued)))
        assert problem.value.kind == "corrupt"


@settings(deadline=None, max_examples=100)
@given(saves=st.integers(0, 12), growth=st.sampled_from([0.5, 3, 10**6]), data=st.data())
def test_a_restore_given_a_history_left_undecoded_equals_the_whole_parse(
    saves: int, growth: float, data: st.DataObject
) -> None:
    """The history as a writer's store holds it (its stored texts: ``chained.py``): where the
    texts are where the saved bytes start, the state holds the history itself, never decoded,
    and the store says it proved it; otherwise it is decoded and compared as a list is."""
    with TemporaryDirectory() as directory:
        path = Path(directory) / snapshot.FILE_NAME
        saved = _saved(path, saves, growth, data)
        listed = data.draw(histories(saved.issued), label="history")
        history = Chained.of(Texts([encode(item) for item in listed]), len(listed))
        store = StateStore(path)
        given_history = store.load(history)
        unread = history._texts._read[0] == len(history) and not history._texts._alone
        assert same(given_history, saved)
        assert list(given_history.issued) == list(StateStore(path).load().issued)
        if store.proved is not None:
            assert store.proved is history and holds(listed, saved.issued)
        prefix = listed == list(saved.issued[: len(listed)])
        if prefix and listed and _ascii(listed):
            event("the history's own texts")
            assert store.proved is history and unread
            assert isinstance(given_history.issued, Chained)
            assert given_history.issued.extends(history)


@settings(deadline=None, max_examples=100)
@given(
    saves=st.integers(0, 12),
    growth=st.sampled_from([0.5, 3, 10**6]),
    chunk=st.integers(1, 3),
    stored=st.booleans(),
    data=st.data(),
)
def test_chunks_of_any_size_prove_the_same_histories(
    saves: int, growth: float, chunk: int, stored: bool, data: st.DataObject
) -> None:
    """Stored texts joined ``chunk`` at a time (a list, encoded whole, as a control): the same
    state, the same items held, the same history proved, as compared in one chunk."""
    with TemporaryDirectory() as directory:
        path = Path(directory) / snapshot.FILE_NAME
        saved = _saved(path, saves, growth, data)
        listed = data.draw(histories(saved.issued), label="history")

        def restored(size: int) -> tuple[SearchState, bool, list[bool] | bool]:
            history: Any = listed
            if stored:
                history = Chained.of(Texts([encode(item) for item in listed]), len(listed))
            store = StateStore(path)
            with patch.object(unparsed, "CHUNK", size):
                state = store.load(history)
            own: list[bool] | bool = isinstance(state.issued, Chained)  # the history itself
            if not stored:
                own = [a is b for a, b in zip(state.issued, listed, strict=False)]
            return state, store.proved is history, own

        small, whole = restored(chunk), restored(10**6)
        assert same(small[0], saved) and same(whole[0], saved)
        assert small[1:] == whole[1:]
        event(f"proved: {small[1]}")
