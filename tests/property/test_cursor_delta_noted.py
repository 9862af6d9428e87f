"""A dict cursor entry made as an Optuna search makes its trials' attributes (a copy, then keys
set: new ones, and tombstones of old ones) and ``noted`` so gets a journal record that turns the
entry before into the one after, its keys in the same order; where it only gained keys, the
record a pass over every entry finds. A note that does not say how the dict was made (a key
twice) is not taken: the pass decides."""

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


def scanned(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The record of cursor ``old`` becoming ``new`` found by a pass over every entry (no
    note taken)."""
    notes = list(cursor_delta._notes)
    cursor_delta._notes.clear()
    try:
        return cursor_delta.diff(old, new)
    finally:
        cursor_delta._notes.extend(notes)


@given(entries, st.lists(st.tuples(st.integers(0, 40).map(str), values), min_size=1))
def test_a_noted_copy_gets_a_record_that_makes_it(
    before: dict[str, Any], sets: list[tuple[str, Any]]
) -> None:
    after = dict(before)
    keys = []
    for key, value in sets:
        after[key] = value
        keys.append(key)
    cursor_delta.noted(before, after, keys)
    change = cursor_delta.diff({"trial_attrs": before}, {"trial_attrs": after})
    if not set(keys) & before.keys() or len(set(keys)) < len(keys):
        assert change == scanned({"trial_attrs": before}, {"trial_attrs": after})
    applied = cursor_delta.apply({"trial_attrs": dict(before)}, change)["trial_attrs"]
    assert applied == after
    assert list(applied) == list(after)
