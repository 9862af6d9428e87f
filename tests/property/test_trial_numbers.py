"""A live study's trial numbers held as a count and a list (``trial_numbers.Numbers``) read as
the list of them: ``own`` numbers that are their indexes, then the others, then those
appended, whichever way they are read (length, an index from either end, slices, iteration,
counts, equality)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion.trial_numbers import Numbers

_numbers = st.lists(st.none() | st.integers(0, 30), max_size=6)


@given(st.integers(0, 8), _numbers, _numbers, st.data())
def test_numbers_read_as_their_list(
    own: int, more: list[int | None], added: list[int | None], data: st.DataObject
) -> None:
    numbers = Numbers(own, more)
    for number in added:
        numbers.append(number)
    whole = [*range(own), *more, *added]
    assert len(numbers) == len(whole) and list(numbers) == whole and numbers == whole
    for index in range(-len(whole) - 2, len(whole) + 2):
        if -len(whole) <= index < len(whole):
            assert numbers[index] == whole[index]
        else:
            with pytest.raises(IndexError):
                numbers[index]
    start, stop = data.draw(st.integers(-10, 10)), data.draw(st.integers(-10, 10))
    assert numbers[start:stop] == whole[start:stop]
    for value in (None, 0, 1, own, 30, "0", True, 1.0):
        assert numbers.count(value) == whole.count(value)
    assert numbers != [*whole, 0] and Numbers(own) == list(range(own))
    assert Numbers() != "" and Numbers() != b"" and Numbers() == ()  # a string is no list
