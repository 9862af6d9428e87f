"""The splices a write stores (``adapters/fake/splices.py``) make, replayed from nothing, the
lists as written, after any edits: names added or removed anywhere, several at once, a list
emptied, gone or replaced by a value that is no list, duplicates and unsorted lists. A write
that moves names in sorted lists stores those names and no other, however far apart they land,
and a chain (``items.side_rows``) never holds more than ``REBASE`` splices, nor starts anew for
a write that changes no list."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.items import side_rows
from katib_resume.adapters.fake.splices import (
    HUNKS,
    REBASE,
    hunks,
    lists_of,
    replay,
    splice,
    splices,
)
from katib_resume.core.katib import API_VERSION
from katib_resume.core.trial_phases import TRIAL_LIST_KEYS

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


@given(names, names)
def test_the_stretches_that_differ_rebuild_the_new_list_from_the_old(
    old: list[str], new: list[str]
) -> None:
    found = hunks(old, new)
    rebuilt = list(old)
    for start, deleted, inserted in reversed(found):  # the last first: starts are in ``old``
        rebuilt[start : start + deleted] = inserted
    assert rebuilt == new
    assert len(found) <= HUNKS + 1
    ends = [0] + [start + deleted for start, deleted, _ in found]
    for (start, deleted, inserted), end in zip(found, ends, strict=False):
        assert start >= end and (start > end or end == 0)  # in order, none touching the last
        assert start + deleted <= len(old) and (deleted or inserted)


POOL = [f"trial-{i:03d}" for i in range(300)]


@given(
    st.sets(st.sampled_from(POOL), max_size=200),
    st.sets(st.sampled_from(POOL), max_size=HUNKS // 2),
    st.sets(st.sampled_from(POOL), max_size=HUNKS // 2),
)
def test_a_write_that_moves_names_stores_those_names_only(
    held: set[str], added: set[str], removed: set[str]
) -> None:
    old = sorted(held - added)
    new = sorted((set(old) | added) - removed)
    found = hunks(old, new)
    assert sum(deleted for _, deleted, _ in found) == len(removed & set(old))
    assert sorted(name for _, _, inserted in found for name in inserted) == sorted(added - removed)


EXPERIMENT = (API_VERSION, "Experiment", "ns", "e")
many = st.sets(st.sampled_from(POOL[:120]), min_size=20, max_size=80).map(sorted)
statuses = st.fixed_dictionaries({}, optional=dict.fromkeys(TRIAL_LIST_KEYS[:2], many))


@given(st.lists(statuses, min_size=2, max_size=12))
def test_a_chain_never_holds_more_than_rebase_splices(history: list[dict[str, Any]]) -> None:
    chain: list[list[Any]] = []
    before: dict[str, Any] | None = None
    for status in history:
        obj = {"apiVersion": API_VERSION, "kind": "Experiment", "status": status}
        side = side_rows(EXPERIMENT, obj, before, len(chain) if before else -1)
        if side is None:  # no list at all: a row of its own
            chain, before = [], None
            continue
        fresh, items, total = side
        chain = [*([] if fresh else chain), *items]
        assert total == len(chain) <= REBASE
        replayed = replay(chain)
        assert {key: replayed.get(key) for key in TRIAL_LIST_KEYS} == lists_of(
            status, TRIAL_LIST_KEYS
        )
        # a write that changes no list (an edit of the spec) stores nothing, however full
        assert side_rows(EXPERIMENT, {**obj, "spec": {}}, obj, len(chain)) == (False, [], total)
        before = obj
