"""The suggestion server's prefix check kept from the last call (``Prefixes``) answers as the
check of every item does, whatever the two lists do between calls: grow (sharing their items,
as the runtime's do, or as equal copies), shrink, or change anywhere, including by a label the
check by key ignores."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.fake.clone import clone
from katib_resume.adapters.fake.codec import encode
from katib_resume.adapters.local.suggestion.assignments import assignment
from katib_resume.adapters.local.suggestion.prefix import Prefixes
from katib_resume.adapters.local.suggestion.prefix import holds as _is_prefix


def _item(number: int, value: str = "1") -> dict[str, Any]:
    return assignment(f"t{number}", (("lr", value),))


edits = st.lists(
    st.tuples(
        st.sampled_from(["issue", "record", "record", "copy", "truncate", "change", "label"]),
        st.integers(0, 3),
        st.booleans(),
    ),
    min_size=5,
    max_size=30,
)


@given(edits)
def test_the_kept_check_equals_the_check_of_every_item(
    steps: list[tuple[str, int, bool]],
) -> None:
    prefixes = Prefixes(_is_prefix)
    issued: tuple[dict[str, Any], ...] = ()
    have: tuple[dict[str, Any], ...] = ()
    for step, n, on_issued in steps:
        if step == "issue":  # the server issues more: its tuple grows, sharing its items
            issued = (*issued, *(_item(len(issued) + i) for i in range(n + 1)))
        elif step == "record":  # the controller records them: parsed copies, then shared
            have = (*have, *copy.deepcopy(issued[len(have) : len(have) + n + 1]))
        elif step == "copy":  # a fresh parse of everything: equal items, none shared
            have = copy.deepcopy(have)
        elif step == "truncate":
            have = have[: max(0, len(have) - n)]
        elif step in ("change", "label") and (issued if on_issued else have):
            target = _edited(issued if on_issued else have, step, n)
            issued, have = (target, have) if on_issued else (issued, target)
        assert prefixes.is_prefix(have, issued) == _is_prefix(have, issued)


def _edited(items: Sequence[dict[str, Any]], step: str, n: int) -> tuple[dict[str, Any], ...]:
    """``items`` with one changed (``change``: another value) or labelled (``label``: a key
    the volume does not keep), at ``n`` modulo their count."""
    target = list(items)
    at = n % len(target)
    target[at] = _item(at, "changed") if step == "change" else {**target[at], "labels": {"x": "1"}}
    return tuple(target)


def _stored(items: tuple[dict[str, Any], ...]) -> Chained:
    """``items`` as a writer's store holds them: their texts, undecoded."""
    return Chained.of(Texts([encode(item) for item in items]), len(items))


@given(edits)
def test_the_kept_check_of_a_history_left_undecoded_equals_the_check_of_every_item(
    steps: list[tuple[str, int, bool]],
) -> None:
    """The controller's history as the embedded runtime holds it (``chained.py``): extended by
    each batch recorded, copied (its texts shared), cut, or stored anew when changed. The memo
    proves it a prefix by identity, and answers as the check of every item does."""
    prefixes = Prefixes(_is_prefix)
    issued: tuple[dict[str, Any], ...] = ()
    have = _stored(())
    for step, n, on_issued in steps:
        if step == "issue":
            issued = (*issued, *(_item(len(issued) + i) for i in range(n + 1)))
        elif step == "record":
            have = have.extended(copy.deepcopy(issued[len(have) : len(have) + n + 1]))
        elif step == "copy":
            have = clone(have)
        elif step == "truncate":
            have = have[: max(0, len(have) - n)]
        elif step in ("change", "label") and (issued if on_issued else have):
            target = _edited(issued if on_issued else have, step, n)
            if on_issued:
                issued = target
            else:
                have = _stored(target)
        assert prefixes.is_prefix(have, issued) == _is_prefix(list(have), issued)
