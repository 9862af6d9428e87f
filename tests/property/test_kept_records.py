"""The kept ledger records read in bulk (``app.embedded.kept_rows._plain_records``) are what the
record-by-record loop reads of the same rows, and any row it cannot vouch for is left to the
loop (which reads it, or refuses the whole summary)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.app.embedded.kept_rows import (
    UNREADABLE,
    _looped_records,
    _plain_records,
    records_of,
)
from katib_resume.core.trial_ledger import TrialRecord
from katib_resume.core.trial_phases import TrialPhase

_names = st.sampled_from(["t1", "t2", "t3"])
_text_or_number = st.one_of(_names, _names, st.integers(0, 3))
_phases = st.one_of(st.sampled_from([p.value for p in TrialPhase]), st.just("Lost"))
_keys = st.one_of(st.none(), st.floats(allow_nan=False), st.integers(-2, 2), st.just("0.5"))
_lists = st.one_of(
    st.lists(st.fixed_dictionaries({"name": _names}), max_size=2), st.just("ab"), st.just(None)
)
_row = st.one_of(
    st.tuples(_text_or_number, _text_or_number, _phases, _keys, _lists, _lists),
    st.tuples(_names, _names),  # another shape: refused by the loop
).map(list)


@given(st.lists(_row, max_size=6))
def test_kept_records_read_in_bulk_are_the_loops(rows: list[Any]) -> None:
    try:
        expected: Any = _looped_records(rows)
    except UNREADABLE:
        expected = None
    try:
        bulk = _plain_records(rows)
    except UNREADABLE:
        bulk = None
        assert expected is None  # the bulk pass refuses only what the loop refuses
    if bulk is not None:
        assert bulk == expected
        assert all(type(r.assignments) is tuple for _, r in bulk.values())
    try:
        read: Any = records_of(rows)
    except UNREADABLE:
        read = None
    assert read == expected


def test_plain_rows_are_read_in_bulk() -> None:
    rows = [
        ["t1", "7", "Succeeded", 0.5, [{"name": "lr"}], []],
        ["t2", "8", "Running", None, [], []],
    ]
    bulk = _plain_records(rows)
    assert bulk == {
        "t1": ("7", TrialRecord("t1", TrialPhase.SUCCEEDED, 0.5, ({"name": "lr"},), ())),
        "t2": ("8", TrialRecord("t2", TrialPhase.RUNNING, None, (), ())),
    }
    assert _plain_records([["t1", "7", "Succeeded", 1, [], []]]) is None  # an integer key
    assert _plain_records([]) == {}
