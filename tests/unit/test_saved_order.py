"""``saved_order``: the saved items' names read from their canonical bytes, without a parse; a
history of texts reordered without decoding them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.local.suggestion.encoded import canonical
from katib_resume.adapters.local.suggestion.saved_order import in_saved_order, names
from katib_resume.core.manifest import Manifest

# Names and values with what could confuse a reader of the bytes: quotes, backslashes, commas,
# braces, non-ASCII (escaped by ``canonical``), and the very text an item starts with.
TRICKY = st.sampled_from(['{"name":"', '","parameterAssignments":', "\\", '"', "é", "\n", ","])
TEXT = st.lists(st.one_of(TRICKY, st.text(max_size=4)), max_size=4).map("".join)
ITEM = st.builds(
    lambda name, values: {
        "name": name,
        "parameterAssignments": [{"name": n, "value": v} for n, v in values],
    },
    TEXT,
    st.lists(st.tuples(TEXT, TEXT), max_size=3),
)


def body_of(items: list[Manifest]) -> bytes:
    return b",".join(canonical(item) for item in items)


@given(st.lists(ITEM, max_size=8))
def test_names_are_the_items_names_in_order(items: list[Manifest]) -> None:
    assert names(body_of(items)) == [item["name"] for item in items]


@given(st.lists(ITEM, max_size=8, unique_by=lambda item: item["name"]), st.randoms())
def test_a_shuffled_history_is_put_back_in_issue_order(items: list[Manifest], rng: object) -> None:
    shuffled = list(items)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    assert in_saved_order(shuffled, body_of(items)) == items


def test_items_the_state_does_not_hold_go_last_in_their_order() -> None:
    saved: list[Manifest] = [{"name": n, "parameterAssignments": []} for n in ("a", "b", "c")]
    history = [{"name": "z"}, {"name": "c"}, {"name": "y"}, {"name": "a"}]
    assert [i["name"] for i in in_saved_order(history, body_of(saved))] == ["a", "c", "z", "y"]


def _texts(items: list[Manifest]) -> Chained:
    return Chained.of(Texts([canonical(item).decode() for item in items]), len(items))


@given(
    st.lists(ITEM, max_size=8, unique_by=lambda item: item["name"]),
    st.randoms(),
    st.integers(0, 8),
    st.lists(ITEM, max_size=2),
)
def test_a_history_of_texts_is_put_in_order_as_a_list_of_its_items_is(
    saved: list[Manifest], rng: object, held: int, strangers: list[Manifest]
) -> None:
    """Its texts reordered undecoded where they are the first saved items (any number of
    them, shuffled), else its items sorted by name; either way, the order the same items
    given as a list get."""
    history = saved[:held] + strangers
    rng.shuffle(history)  # type: ignore[attr-defined]
    ordered = in_saved_order(_texts(history), body_of(saved))
    assert list(ordered) == list(in_saved_order(history, body_of(saved)))
    if not strangers:
        assert isinstance(ordered, Chained) and ordered.texts() is not None  # not decoded


def test_a_history_of_texts_with_an_item_twice_is_sorted_as_items() -> None:
    saved: list[Manifest] = [{"name": n, "parameterAssignments": []} for n in ("a", "b")]
    history = [saved[1], saved[1]]
    ordered = in_saved_order(_texts(history), body_of(saved))
    assert ordered == history and not isinstance(ordered, Chained)
