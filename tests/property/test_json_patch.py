"""The mutating webhook's JSON Patch (``app.webhook.patch``) turns any object into any other.

Defaulting only adds fields, but the patch function is total: for any two JSON objects the
patch it answers, applied by RFC 6902's rules, gives exactly the second (types included: ``1``,
``1.0`` and ``true`` are three values on the wire), and equal objects give no patch at all.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.app.webhook.patch import json_patch
from tests.support.webhook import apply_patch

keys = st.sampled_from(["a", "b", "c/d", "e~f", ""])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5]),
    st.text(max_size=3),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)
objects = st.dictionaries(keys, values, max_size=5)


def wire(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@settings(max_examples=300)
@given(objects, objects)
def test_the_patch_turns_one_object_into_the_other(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    assert wire(apply_patch(old, json_patch(old, new))) == wire(new)


@settings(max_examples=300)
@given(objects)
def test_equal_objects_need_no_patch(same: dict[str, Any]) -> None:
    assert json_patch(same, json.loads(json.dumps(same))) == []


def test_one_and_true_differ_on_the_wire() -> None:
    assert json_patch({"a": [1]}, {"a": [True]}) == [
        {"op": "replace", "path": "/a/0", "value": True}
    ]


def test_keys_are_escaped_as_json_pointers() -> None:
    assert json_patch({}, {"a/b~c": 1}) == [{"op": "add", "path": "/a~1b~0c", "value": 1}]
