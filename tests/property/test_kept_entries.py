"""The kept result entries read in bulk (``app.embedded.kept_rows._plain_entries``) are what the
entry-by-entry loop reads of the same rows, and any row it cannot vouch for is left to the loop."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.app.embedded.kept_rows import _plain_entries, entries_of

_values = st.one_of(st.none(), st.floats(allow_nan=False), st.integers(-5, 5))
_keys = st.sampled_from(["t1", "t2", "t3"])
_text_or_number = st.one_of(_keys, _keys, st.integers(0, 3))
_row = st.one_of(
    st.tuples(_text_or_number, _text_or_number, st.dictionaries(_keys, _values, max_size=2)),
    st.tuples(_keys, _keys),  # another shape: refused by the loop
).map(list)


def _by_loop(rows: list[Any]) -> dict[str, tuple[str, dict[str, float | None]]]:
    """The loop's reading, one row at a time (``entries_of`` without the bulk pass)."""
    entries = {}
    for name, version, entry in rows:
        values = dict(entry)
        if not all(v is None or type(v) is float for v in values.values()):
            values = {str(k): None if v is None else float(v) for k, v in values.items()}
        entries[str(name)] = (str(version), values)
    return entries


@given(st.lists(_row, max_size=6))
def test_kept_entries_read_in_bulk_are_the_loops(rows: list[Any]) -> None:
    try:
        expected: Any = _by_loop(rows)
    except ValueError:
        expected = ValueError
    bulk = _plain_entries(rows)
    if bulk is not None:
        assert bulk == expected
        assert all(type(v) is tuple and type(v[1]) is dict for v in bulk.values())
    try:
        read: Any = entries_of(rows)
    except ValueError:
        read = ValueError
    assert read == expected


def test_plain_rows_are_read_in_bulk_and_copied() -> None:
    entry = {"t1": 0.5}
    rows = [["t1", "7", entry], ["t2", "8", {}]]
    bulk = _plain_entries(rows)
    assert bulk == {"t1": ("7", {"t1": 0.5}), "t2": ("8", {})}
    assert bulk["t1"][1] is not entry  # a copy, as the loop's ``dict(entry)``
    assert _plain_entries([["t1", 7, {}]]) is None and _plain_entries([]) == {}
