"""A Suggestion's assignments left undecoded (``adapters/fake/chained.py``) are observably the
list they decode to: its length, items, slices, iteration, comparisons, encoding and copies are
the list's, whatever the items (named or not, names with escapes, integers beyond 64 bits, not
even objects) and whatever was appended since; and the answers it gives without decoding
(``names``, ``plain``, ``extends``, ``texts``) are the decoded list's."""

from __future__ import annotations

import copy
import pickle
import sys
from collections.abc import Callable
from typing import Any
from unittest import mock

from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.fake import chained
from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.fake.clone import clone
from katib_resume.adapters.fake.codec import decode, encode
from katib_resume.adapters.fake.store import as_json, as_json_over
from katib_resume.core.history import Stored, plain

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),  # beyond 64 bits: written by ``json`` behind a space
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
_names = st.one_of(
    st.text(max_size=8),  # quotes, backslashes, control and non-ASCII characters
    st.sampled_from(["a", "b", 'q"uote', "back\\slash", "tab\t", "é"]),
    st.integers(0, 9),  # a name that is no string
)
_values = st.lists(
    st.fixed_dictionaries({"name": st.text(max_size=4), "value": st.text(max_size=4)}),
    max_size=2,
)
_assignment = st.fixed_dictionaries({"name": _names, "parameterAssignments": _values})
_item = st.one_of(
    _assignment,
    _assignment,
    st.fixed_dictionaries({"parameterAssignments": _values, "name": _names}),  # name later
    st.dictionaries(st.text(max_size=4), _scalars, max_size=3),  # no name, perhaps empty
    st.lists(_scalars, max_size=2),  # not an object at all
    _scalars,
)
_items = st.lists(_item, max_size=12)


def _chained(items: list[Any], tail: list[Any]) -> Chained:
    """The history of ``items`` stored (their texts, as the store writes them) and ``tail``
    appended since."""
    texts = Texts([encode(item) for item in items])
    held = Chained.of(texts, len(items))
    return held.extended(tail) if tail else held


def _names_or_error(names: Callable[[], list[str]]) -> list[str] | type[Exception]:
    """The names, or the kind of error reading them raises (an item that is no object)."""
    try:
        return names()
    except AttributeError as error:
        return type(error)


def _json(value: Any) -> Any:
    """``value`` as it reads back from its JSON (a tuple a list)."""
    return decode(encode(value))


@given(_items, st.lists(_assignment, max_size=3), st.data())
def test_a_history_reads_as_the_list_it_decodes_to(
    items: list[Any], tail: list[Any], data: st.DataObject
) -> None:
    history = _chained(items, tail)
    whole = [decode(encode(item)) for item in items] + tail
    assert len(history) == len(whole)
    assert history == whole and whole == history and history == tuple(whole)
    assert (history != whole) is False
    assert list(history) == whole and list(reversed(history)) == whole[::-1]
    if whole:
        index = data.draw(st.integers(-len(whole), len(whole) - 1))
        assert history[index] == whole[index]
        assert whole[index] in history
        assert history.index(whole[index]) == whole.index(whole[index])
    start = data.draw(st.integers(-15, 15) | st.none())
    stop = data.draw(st.integers(-15, 15) | st.none())
    step = data.draw(st.sampled_from([None, 1, 2, -1, 3]))
    part = history[start:stop:step]
    assert isinstance(part, Chained) and part == whole[start:stop:step]
    assert list(part) == whole[start:stop:step]


@given(_items, st.lists(_assignment, max_size=3), st.integers(-2, 14))
def test_what_it_answers_unread_is_what_the_decoded_list_says(
    items: list[Any], tail: list[Any], start: int
) -> None:
    history = _chained(items, tail)
    whole = list(history)
    assert _names_or_error(lambda: history.names(start)) == _names_or_error(
        lambda: [str(item.get("name")) for item in whole[start:]]
    )
    assert history.plain(max(0, start)) == plain(whole[max(0, start) :])
    assert history.texts() == (None if tail else tuple(encode(item) for item in items))


@given(_items, st.lists(_assignment, max_size=3), st.lists(_assignment, max_size=3))
def test_an_extension_is_proved_by_identity_and_equals_the_longer_list(
    items: list[Any], tail: list[Any], more: list[Any]
) -> None:
    history = _chained(items, tail)
    longer = history.extended(more)
    assert longer == [*history, *more] and history + tuple(more) == longer
    assert longer.extends(history) and longer.extends(
        history[: len(history) // 2] if not tail else []
    )
    assert clone(longer).extends(history)  # a copy shares the texts
    if more:
        assert not history.extends(longer) and history != longer


@given(_items, st.lists(_assignment, max_size=3))
def test_encoding_and_copies_are_the_lists(items: list[Any], tail: list[Any]) -> None:
    history = _chained(items, tail)
    whole = list(history)
    suggestion: dict[str, Any] = {
        "kind": "Suggestion",
        "status": {"suggestions": history, "suggestionCount": 1},
    }
    listed = {"kind": "Suggestion", "status": {"suggestions": whole, "suggestionCount": 1}}
    assert decode(encode(suggestion)) == _json(listed)
    assert decode(encode(history)) == _json(whole)
    for copied in (
        clone(suggestion)["status"]["suggestions"],
        clone(history),
        copy.deepcopy(history),
        pickle.loads(pickle.dumps(history)),
        as_json(history),
    ):
        assert copied == whole and len(copied) == len(whole)
    assert copy.copy(history) is history
    if whole and isinstance(whole[-1], dict):
        mine = clone(suggestion)["status"]["suggestions"][-1]
        mine["mutated"] = True  # a copy's items are its own
        assert "mutated" not in history[-1]


@given(_items, st.lists(_assignment, max_size=3), st.lists(_assignment, min_size=1, max_size=3))
def test_a_write_of_an_extension_converts_the_new_items_only(
    items: list[Any], tail: list[Any], more: list[Any]
) -> None:
    stored = as_json(_chained(items, tail))
    written = as_json_over(stored.extended(tuple(more)), stored)
    assert isinstance(written, Chained) and written.extends(stored)
    assert written == [*stored, *more]
    assert as_json_over(stored, stored) is stored


@given(
    items=st.lists(_assignment, min_size=1, max_size=6),
    one=st.integers(0, 6),
    two=st.integers(0, 6),
    first=st.lists(_assignment, max_size=2),
    second=st.lists(_assignment, max_size=2),
    same=st.booleans(),
)
def test_extends_says_so_only_of_a_prefix(
    *, items: list[Any], one: int, two: int, first: list[Any], second: list[Any], same: bool
) -> None:
    """Two histories over the same texts (a revision and the one before it, as an open reads
    them) or over equal ones (a chain stored anew): ``extends`` is never wrong when it says
    yes, and says yes of a history extended, cut or copied from the other."""
    texts = Texts([encode(item) for item in items])
    other = texts if same else Texts(texts.texts[:])
    a = Chained.of(texts, min(one, len(items))).extended(first)
    b = Chained.of(other, min(two, len(items))).extended(second)
    for longer, shorter in ((a, b), (b, a)):
        if longer.extends(shorter):
            assert list(longer)[: len(shorter)] == list(shorter)
    assert a.extended(second).extends(a) and clone(a).extended(second).extends(a)
    assert a.extends(a[: len(a) // 2]) or bool(first)


@given(_items, st.lists(_assignment, max_size=3), st.data())
def test_stored_says_which_chain_items_a_history_starts_with(
    items: list[Any], tail: list[Any], data: st.DataObject
) -> None:
    """``stored``: a history over a chain's texts starts with the chain's first items, as many
    as it holds of the texts, whatever was appended, cut or copied; a slice further on, or
    texts of no chain, say nothing."""
    held = data.draw(st.integers(0, len(items)), label="held")
    texts = Texts([encode(item) for item in items], chain=5)
    history = Chained.of(texts, held).extended(tail)
    for same in (history, copy.deepcopy(history), clone(history), history.extended(tail)):
        assert same.stored() == Stored(5, held)
        assert list(same)[:held] == _json(items[:held])
    cut = data.draw(st.integers(0, len(history)), label="cut")
    assert history[:cut].stored() == (Stored(5, min(cut, held)) if held else None)
    assert history[1:].stored() is None
    assert _chained(items, tail).stored() is None  # texts of no chain
    assert pickle.loads(pickle.dumps(history)).stored() is None  # its texts alone


def test_names_are_read_from_the_texts_exactly() -> None:
    """A name the text escapes (a quote, a backslash, a control character) is decoded, one in
    UTF-8 or with no escape is read as it stands; an item that does not start with its name,
    or whose name is no string, is decoded."""
    names: list[Any] = ['q"uote', "back\\slash", "tab\t", "é", "plain", 7, None]
    items = [{"name": name, "parameterAssignments": []} for name in names]
    items.append({"parameterAssignments": [{"name": "inner", "value": "1"}], "name": "late"})
    items.append({"parameterAssignments": [{"name": "inner", "value": "1"}]})
    expected = [str(item.get("name")) for item in items]
    for start in range(len(items)):
        for end in range(start, len(items) + 1):
            history = _chained(items[start:end], [])
            assert history.names() == expected[start:end]
            assert history.names(1) == expected[start + 1 : end]
    assert _chained(items[4:5], items[:1]).names() == ["plain", 'q"uote']


def test_an_item_only_json_writes_exactly_reads_back_exactly_wherever_it_stands() -> None:
    """An integer beyond 64 bits, which ``orjson`` would read back as a float (``json`` wrote
    it, behind a space), reads back exactly in a range of items whatever its place among them,
    and so does the list written of them (``fragment``: ``json``'s)."""
    big = 2**64 + 1
    for at in range(4):
        items: list[Any] = [{"name": str(i), "parameterAssignments": []} for i in range(3)]
        items.insert(at, {"name": "big", "value": big})
        history = _chained(items, [])
        assert list(history) == items and history[at]["value"] == big
        assert decode(encode(history))[at]["value"] == big


_reads = st.lists(
    st.one_of(
        st.integers(0, 40).map(lambda at: (at, at + 1)),  # one item
        st.tuples(st.integers(0, 40), st.integers(0, 40)),  # a slice, perhaps empty
    ),
    max_size=12,
)


@given(
    items=st.lists(_assignment, min_size=1, max_size=40),
    reads=_reads,
    least=st.integers(1, 4),
    indexed=st.booleans(),
)
@example(  # 5 alone, then the suffix grows down to within reach of it, then 5 again
    items=[{"name": str(i), "parameterAssignments": []} for i in range(10)],
    reads=[(9, 10), (5, 6), (8, 9), (7, 8), (5, 6)],
    least=1,
    indexed=True,
)
def test_reads_decode_each_item_once_in_a_range_and_far_items_alone(
    *, items: list[Any], reads: list[tuple[int, int]], least: int, indexed: bool
) -> None:
    """Whatever is read, in whatever order: an item reads as the same object every time, a
    text is decoded at most once in a range and once alone, an empty read decodes nothing,
    one item further back than the decoded suffix reaches (``MIN_RANGE`` at least) is
    decoded alone (a restart reads the best trial's point: one item, anywhere in the
    history), and one decoded alone is read again without a decode."""
    texts = Texts([encode(item) for item in items])
    held, whole = Chained.of(texts, len(items)), [decode(encode(item)) for item in items]
    ranges: list[int] = []  # the length of each range decoded
    alone: list[int] = []  # the index of each item decoded alone
    real = chained._decoded

    def counted(part: Any) -> list[Any]:
        caller = sys._getframe(1)
        if caller.f_code.co_name == "_one":
            alone.append(caller.f_locals["index"])
        else:
            ranges.append(len(part))
        return real(part)

    seen: dict[int, Any] = {}
    with (
        mock.patch.object(chained, "_decoded", counted),
        mock.patch.object(chained, "MIN_RANGE", least),
    ):
        for first, last in reads:
            lo, hi = min(first, len(items)), min(last, len(items))
            start, suffix = texts._read[0], len(texts._read[1])
            before, held_alone = (len(ranges), len(alone)), set(texts._alone)
            got = [held[lo]] if indexed and hi == lo + 1 else list(held[lo:hi])
            assert got == whole[lo:hi]
            for at, item in enumerate(got, lo):
                assert seen.setdefault(at, item) is item
            if hi <= lo:
                assert (len(ranges), len(alone)) == before
            if hi == lo + 1 and lo in held_alone:
                assert (len(ranges), len(alone)) == before
            if hi == lo + 1 and lo < start - max(suffix, least):
                assert len(ranges) == before[0] and alone[before[1] :] in ([], [lo])
    assert sum(ranges) == len(items) - texts._read[0] and len(set(alone)) == len(alone)
