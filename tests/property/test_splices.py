"""The splices a write stores (``adapters/fake/splices.py``) make, replayed from nothing, the
lists as written, after any edits: names added or removed anywhere, several at once, a list
emptied, gone or replaced by a value that is no list, duplicates and unsorted lists."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.splices import lists_of, replay, splice, splices

KEYS = ("a", "b")
names = st.lists(st.sampled_from([f"t{i}" for i in range(12)]), max_size=12)
values = st.one_of(names, names.map(sorted), st.none(), st.just("x"), st.just({"k": 1}))
states = st.lists(
    st.fixed_dictionaries({}, optional={key: values for key in KEYS}), min_size=1, max_size=12
)


@given(states)
def test_replaying_every_splice_so_far_gives_the_lists_as_written(
    history: list[dict[str, Any]],
) -> None:
    made: list[list[Any]] = []
    before = lists_of({}, KEYS)
    for parent in history:
        after = lists_of(parent, KEYS)
        made += splices(before, after)
        for replayed in (replay(made), replay(splices({}, after))):  # continued, or anew
            assert {key: replayed.get(key) for key in KEYS} == after
        before = after


@given(names, names)
def test_a_splice_replaces_only_what_lies_between_the_common_start_and_end(
    old: list[str], new: list[str]
) -> None:
    start, deleted, inserted = splice(old, new)
    rebuilt = list(old)
    rebuilt[start : start + deleted] = inserted
    assert rebuilt == new
    end = len(old) - start - deleted
    assert old[:start] == new[:start] and old[len(old) - end :] == new[len(new) - end :]
    # as short as can be: the next entry on either side differs (or there is none)
    assert not (deleted and inserted and old[start] == new[start])
    assert not (deleted and inserted and old[start + deleted - 1] == inserted[-1])


def test_one_name_added_in_the_middle_is_one_short_splice() -> None:
    old = [f"t{i:04d}" for i in range(0, 2000, 2)]
    new = sorted([*old, "t0999"])
    assert splices({"a": old}, {"a": new}) == [["a", 500, 0, ["t0999"]]]
