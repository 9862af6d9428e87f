"""The fake API server's conversion of a status write: sharing the stored parts changes nothing
but the work (``as_json_over`` equals ``as_json``, and takes its equal parts from the store)."""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.store import as_json, as_json_over

leaves = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["a", "b", "c"]))
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3),
    ),
    max_leaves=12,
)


@given(values, values)
def test_converting_over_a_stored_value_equals_converting_alone(new: Any, old: Any) -> None:
    stored = as_json(old)
    shared = as_json_over(new, stored)
    # Keys sorted: a mapping equal to its stored place is that place, in the stored key order
    # (JSON objects are unordered; Python's ``==`` ignores the order as well).
    assert json.dumps(shared, sort_keys=True) == json.dumps(as_json(new), sort_keys=True)


@given(values)
def test_an_unchanged_value_is_the_stored_one_and_a_grown_list_shares_its_items(
    value: Any,
) -> None:
    stored = as_json(value)
    if type(value) is type(stored) and value == stored:  # no tuple in it (stored as lists)
        assert as_json_over(value, stored) is stored
    if isinstance(stored, list) and stored:
        grown = as_json_over([*stored, "new"], stored)
        assert grown == [*stored, "new"]
        assert all(mine is held for mine, held in zip(grown, stored, strict=False))


def _outcome(convert: Any) -> str:
    """What a conversion gives, as JSON text, or the kind of error it raises."""
    try:
        return json.dumps(convert())
    except (TypeError, ValueError) as error:
        return type(error).__name__


# A float no leaf equals: ``as_json_over`` keeps the stored spelling of a number wherever the
# value's item compares equal to the stored one it is checked against (its docstring), so a 1.0
# drawn among the stored ints came back 1, by design, not a wrong conversion.
odd = st.one_of(values, st.just(math.nan), st.just(datetime(2026, 1, 1)), st.just(0.5))


@given(
    st.lists(leaves, max_size=40),
    st.integers(0, 40),
    st.integers(0, 5),
    st.lists(odd, max_size=4),
    st.booleans(),
)
def test_a_list_spliced_from_the_stored_one_converts_as_alone(
    old: list[Any], start: int, deleted: int, inserted: list[Any], as_tuple: bool
) -> None:
    """A sorted name list with one name inserted or removed, a list grown or cut, anything
    with repeated items (where the binary searches may guess wrong), values JSON cannot carry:
    the same answer (or the same error) as converting ``value`` alone."""
    stored = as_json(old)
    new = old[:start] + inserted + old[start + deleted :]
    value = tuple(new) if as_tuple else new
    assert _outcome(lambda: as_json_over(value, stored)) == _outcome(lambda: as_json(value))


@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 5), st.integers(0, 3))
def test_a_list_grown_or_cut_in_one_stretch_shares_every_stored_item_around_it(
    size: int, start: int, deleted: int, inserted: int
) -> None:
    """Distinct items, a stretch that changes the length (a name inserted in a sorted list, a
    list grown at its end): the result holds the stored items themselves around the stretch.
    (A stretch replaced by as many items may be converted whole: equal, not shared.)"""
    stored = as_json([{"n": n} for n in range(size)])
    start = min(start, size)
    deleted = min(deleted, size - start)
    value = stored[:start] + [{"new": n} for n in range(inserted)] + stored[start + deleted :]
    shared = as_json_over(value, stored)
    assert shared == value and all(type(item) is dict for item in shared)
    if inserted != deleted:
        around = stored[:start] + stored[start + deleted :]
        ends = shared[:start] + shared[start + inserted :]
        assert all(mine is held for mine, held in zip(ends, around, strict=True))
