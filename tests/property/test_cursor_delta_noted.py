"""A dict cursor entry grown as an Optuna search grows its trials' attributes (a copy, then keys
set) and ``noted`` so gets the journal record a pass over every entry finds, which turns the
entry before into the one after: for new keys, and for keys the copy replaced (which the note
does not cover, so the pass decides)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import cursor_delta

values = st.one_of(
    st.dictionaries(st.sampled_from(["cma:generation", "x"]), st.integers(0, 3), max_size=2),
    st.integers(0, 3),
    st.floats(allow_nan=False, allow_infinity=False),
)
entries = st.dictionaries(st.integers(0, 30).map(str), values, max_size=12)


def scanned(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The record found by a pass over every entry (no note)."""
    notes = list(cursor_delta._notes)
    cursor_delta._notes.clear()
    try:
        return cursor_delta.diff({"trial_attrs": before}, {"trial_attrs": after})
    finally:
        cursor_delta._notes.extend(notes)


@given(entries, st.lists(st.tuples(st.integers(0, 40).map(str), values), min_size=1))
def test_a_noted_copy_gets_the_record_a_pass_finds(
    before: dict[str, Any], sets: list[tuple[str, Any]]
) -> None:
    after = dict(before)
    keys = []
    for key, value in sets:
        after[key] = value
        keys.append(key)
    cursor_delta.noted(before, after, keys)
    change = cursor_delta.diff({"trial_attrs": before}, {"trial_attrs": after})
    assert change == scanned(before, after)
    copy = {key: value for key, value in before.items()}
    assert cursor_delta.apply({"trial_attrs": copy}, change) == {"trial_attrs": after}
