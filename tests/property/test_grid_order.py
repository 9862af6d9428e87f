"""The grid's order (``permutation.py``): for any size and seed, every index once."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion.permutation import LIMIT, Permutation

SIZES = st.one_of(
    st.integers(0, 600),
    st.integers(1, 6).map(lambda bits: 1 << (2 * bits)),  # a network's whole range
    st.integers(1, 6).map(lambda bits: (1 << (2 * bits)) + 1),  # the next range's smallest
)
SEEDS = st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=8))


@given(SIZES, SEEDS)
def test_every_position_names_a_different_cell(size: int, seed: int | str) -> None:
    order = Permutation(size, seed)
    assert sorted(order(k) for k in range(size)) == list(range(size))
    assert [order(k) for k in range(size)] == [Permutation(size, seed)(k) for k in range(size)]
    for outside in (-1, size):
        with pytest.raises(IndexError):
            order(outside)


@given(st.integers(LIMIT // 3, LIMIT), st.integers(0, 2**64), st.data())
def test_a_huge_grid_is_ordered_as_cheaply(size: int, seed: int, data: st.DataObject) -> None:
    """The ``k``-th cell of the largest grid is a few network passes: nothing is enumerated."""
    order = Permutation(size, seed)
    positions = data.draw(st.lists(st.integers(0, size - 1), min_size=2, max_size=20, unique=True))
    cells = [order(k) for k in positions]
    assert len(set(cells)) == len(cells)
    assert all(0 <= cell < size for cell in cells)


def test_a_size_past_the_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 2"):
        Permutation(LIMIT + 1, 0)
