"""A snapshot's marks: a fingerprint of each assignment's name and point, sorted; a lookup
through them answers exactly as a search of every byte does.

The oracle is the assignments themselves: a name is taken when an assignment has it, a point
was issued when an assignment has its values, whatever the names and values hold (quotes,
backslashes, text that looks like an assignment's own JSON, non-ASCII), whichever assignments
the marks cover, and even when every fingerprint collides.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import encoded, marks
from katib_resume.adapters.local.suggestion.assignments import assignment
from katib_resume.adapters.local.suggestion.encoded import canonical
from katib_resume.adapters.local.suggestion.known import Names
from katib_resume.adapters.local.suggestion.marks import WIDTH, Marks
from katib_resume.adapters.local.suggestion.points import Points, _written
from katib_resume.adapters.local.suggestion.space import Point
from katib_resume.adapters.local.suggestion.state import FILE_NAME, SearchState
from katib_resume.adapters.local.suggestion.state_store import StateStore
from katib_resume.core.manifest import Manifest

tricky = st.sampled_from(
    ['"', "\\", '"}', "]},{", ']},{"name":', '"parameterAssignments":[', '{"name":"x","value":"1"}']
)
texts = st.one_of(st.text(max_size=5), tricky, st.sampled_from(["0.1", "1", "a", "é"]))
points = st.lists(st.tuples(st.sampled_from(["x", "y", 'q"']), texts), max_size=3).map(tuple)
names = st.one_of(st.sampled_from(["e-1", "e-2", "e-3"]), texts)
items = st.lists(st.tuples(names, points), max_size=8)


def _body(drawn: list[tuple[str, Point]]) -> bytes:
    return canonical([assignment(name, point) for name, point in drawn])[1:-1]


def _columns(drawn: list[tuple[str, Point]]) -> tuple[str, str]:
    """The columns the marks must hold, each fingerprint of what a search looks for."""
    named = sorted(marks.fingerprint(canonical(name)) for name, _ in drawn)
    valued = sorted(marks.fingerprint(_written(point)) for _, point in drawn)
    return "".join(named), "".join(valued)


def _covered(drawn: list[tuple[str, Point]], covered: int) -> tuple[bytes, Marks | None]:
    """The body of ``drawn`` and the marks of its first ``covered`` items (as read with a
    snapshot of them, the rest after it: the journal's)."""
    body, head = _body(drawn), _body(drawn[:covered])
    return body, marks.covering(head, None) if covered else None


@settings(max_examples=300)
@given(drawn=items)
def test_the_marks_hold_a_fingerprint_of_each_name_and_point(
    drawn: list[tuple[str, Point]],
) -> None:
    made = marks.covering(_body(drawn), None)
    assert (made.names, made.points) == _columns(drawn)
    assert made.end == len(_body(drawn)) and len(made.names) == WIDTH * len(drawn)


@settings(max_examples=300)
@given(drawn=items, more=items)
def test_marks_extended_are_the_marks_made_at_once(
    drawn: list[tuple[str, Point]], more: list[tuple[str, Point]]
) -> None:
    """A save fingerprints only the assignments after those its marks cover."""
    whole = drawn + more
    read = marks.covering(_body(drawn), None) if drawn else None
    assert marks.covering(_body(whole), read) == marks.covering(_body(whole), None)


@settings(max_examples=500)
@given(drawn=items, asked=items, colliding=st.booleans(), data=st.data())
def test_a_lookup_answers_as_the_assignments_do(
    drawn: list[tuple[str, Point]],
    asked: list[tuple[str, Point]],
    colliding: bool,
    data: st.DataObject,
) -> None:
    """Through marks of any number of the assignments (the rest searched), and when every
    text has the same fingerprint (``colliding``: every lookup finds it, the search confirms
    it)."""
    covered = data.draw(st.integers(0, len(drawn)))
    body, read = _covered(drawn, covered)
    asked += data.draw(st.lists(st.sampled_from(drawn), max_size=4)) if drawn else []
    if not colliding:
        return _looked_up(body, read, drawn, asked)
    same = "A" * WIDTH
    if read is not None:
        read = Marks(same * covered, same * covered, read.end)
    with mock.patch.object(marks, "fingerprint", lambda _: same):
        return _looked_up(body, read, drawn, asked)


def _looked_up(
    body: bytes, read: Marks | None, drawn: list[tuple[str, Point]], asked: list[tuple[str, Point]]
) -> None:
    """Each name and point ``asked`` is looked up through ``read`` as the assignments
    ``drawn`` (whose bytes ``body`` is) answer."""
    for name, point in asked:
        assert marks.name_in(body, read, canonical(name)) == any(n == name for n, _ in drawn)
        assert marks.point_in(body, read, _written(point)) == any(v == point for _, v in drawn)


@given(drawn=items.filter(bool))
def test_the_marks_read_back_as_written(drawn: list[tuple[str, Point]]) -> None:
    body = _body(drawn)
    made = marks.covering(body, None)
    assert marks.read(made.field(), len(body)) == made


@pytest.mark.parametrize(
    ("value", "end"),
    [
        (None, 10),
        ({"names": "AAAAAAAA"}, 10),
        ({"names": "AAAAAAAA", "points": "AAAAAAAA", "more": ""}, 10),
        ({"names": 1, "points": "AAAAAAAA"}, 10),
        ({"names": "AAAAAAAA", "points": "AAAA"}, 10),
        ({"names": "AAAAAAA", "points": "AAAAAAA"}, 10),
        ({"names": "AAAAAAAé", "points": "AAAAAAAA"}, 10),
        ({"names": "", "points": ""}, 10),
        ({"names": "AAAAAAAA", "points": "AAAAAAAA"}, 0),
    ],
)
def test_what_is_not_marks_is_refused(value: Any, end: int) -> None:
    with pytest.raises(ValueError):
        marks.read(value, end)


def test_no_assignments_have_empty_marks() -> None:
    made = marks.covering(b"", None)
    assert made == Marks("", "", 0) and marks.read(made.field(), 0) == made
    assert not marks.name_in(b"", made, canonical("x"))


def test_bytes_that_are_not_assignments_are_refused() -> None:
    with pytest.raises(ValueError):
        marks.covering(b'{"name":"a"}', None)
    with pytest.raises(ValueError):
        marks.covering(b"[1,2]", None)


@settings(max_examples=150)
@given(
    batches=st.lists(items, min_size=1, max_size=6).filter(any),  # (the empty tuple is shared)
    records=st.integers(1, 4),
    asked=items,
    proved=st.booleans(),
)
def test_a_restart_looks_up_what_the_volume_holds(
    batches: list[list[tuple[str, Point]]],
    records: int,
    asked: list[tuple[str, Point]],
    proved: bool,
) -> None:
    """Saves of batches, compacted every ``records`` saves or so (the snapshot's marks), the
    rest in the journal; read back (the history handed over, or not), the name and point of
    every assignment and of others are looked up as the assignments answer."""
    drawn = [pair for batch in batches for pair in batch]
    with tempfile.TemporaryDirectory() as directory:
        saver = StateStore(Path(directory) / FILE_NAME, floor=1 << 20, records=records)
        issued: tuple[Manifest, ...] = ()
        for batch in batches:
            issued += tuple(assignment(name, point) for name, point in batch)
            saver.save(SearchState("ns/marks", "sobol", 0, "space", {"n": len(issued)}, issued))
        state = StateStore(saver.path).load(list(issued) if proved else None)
    kept = encoded.kept(state.issued)
    assert kept is not None and kept.marks is not None
    assert kept.body[: kept.marks.end] == _body(drawn[: _count(kept.body[: kept.marks.end])])
    for name, point in asked + drawn:
        taken = any(name == had for had, _ in drawn)
        issued_point = any(point == had for _, had in drawn)
        assert marks.name_in(kept.body, kept.marks, canonical(name)) == taken
        assert marks.point_in(kept.body, kept.marks, _written(point)) == issued_point
        assert (name in Names(state.issued)) == taken
        assert (point in Points(state.issued).seen()) == issued_point


def _count(body: bytes) -> int:
    """How many canonical assignments ``body`` holds."""
    return len(orjson.loads(b"[" + body + b"]"))


def test_marks_that_end_inside_an_assignment_are_refused() -> None:
    body = _body([("a", (("x", "1"),)), ("b", (("x", "2"),))])
    with pytest.raises(ValueError):
        marks.covering(body, Marks("AAAA", "AAAA", 5))
