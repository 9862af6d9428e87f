"""The fake API server's conversion of a status write: sharing the stored parts changes nothing
but the work (``as_json_over`` equals ``as_json``, and takes its equal parts from the store)."""

from __future__ import annotations

import json
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
    assert json.dumps(shared) == json.dumps(as_json(new))


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
