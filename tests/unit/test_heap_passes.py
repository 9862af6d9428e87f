"""``heap.fewer_passes`` raises the young generation's threshold inside its block only,
leaves the older generations' and a switched-off collector as they were, and puts the
thresholds back whatever happens inside. ``heap.paused`` hands what its block built to the
oldest generation (inside ``heap.frozen``: the permanent one, until the frozen block ends)
without a walk, and still lets a cycle made inside be collected later."""

from __future__ import annotations

import gc
import weakref

import pytest

from katib_resume.adapters import heap


def test_the_young_threshold_is_raised_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    with heap.fewer_passes(50_000):
        assert gc.get_threshold() == (max(50_000, before[0]), *before[1:])
    assert gc.get_threshold() == before


def test_a_higher_threshold_is_not_lowered() -> None:
    before = gc.get_threshold()
    gc.set_threshold(200_000, *before[1:])
    try:
        with heap.fewer_passes(50_000):
            assert gc.get_threshold()[0] == 200_000
    finally:
        gc.set_threshold(*before)


def test_restored_after_an_error_and_a_switched_off_collector_left_off() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), heap.fewer_passes():
        raise RuntimeError("inside")
    assert gc.get_threshold() == before
    gc.set_threshold(0, *before[1:])
    try:
        with heap.fewer_passes():
            assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)


def test_cyclic_garbage_is_still_collected_inside() -> None:
    """Only later: a cycle made inside the block is freed by a collection there."""

    class Node:
        other: Node

    with heap.fewer_passes(1_000):
        gc.collect(0)  # the young generation's count starts from 0
        node = Node()
        node.other = node
        ref = weakref.ref(node)
        del node
        assert ref() is not None  # not yet: no collection since
        kept: list[list[int]] = [[] for _ in range(5_000)]  # past the threshold: collected
        assert ref() is None and len(kept) == 5_000


def _generation_of(obj: object) -> int | None:
    for generation in range(3):
        if any(held is obj for held in gc.get_objects(generation)):
            return generation
    return None


def test_what_a_paused_block_built_is_not_walked_when_the_collector_comes_back() -> None:
    """Moved to the oldest generation, the young one's count starting again from nothing."""
    assert gc.isenabled()
    with heap.paused():
        assert not gc.isenabled()
        built = [[index] for index in range(20_000)]
    assert gc.isenabled()
    assert gc.get_count()[0] < 700  # no collection is due: the next one walks little
    assert _generation_of(built) == 2 and _generation_of(built[-1]) == 2


def test_inside_a_frozen_block_a_paused_block_freezes_what_it_built_until_the_frozen_ends() -> None:
    before = gc.get_freeze_count()
    with heap.frozen():
        frozen_at_start = gc.get_freeze_count()
        with heap.paused():
            built = [[index] for index in range(1_000)]
        assert gc.get_freeze_count() >= frozen_at_start + 1_000
        assert _generation_of(built) is None  # permanent: never walked
        with heap.frozen():  # a nested block leaves the outer one's objects frozen
            pass
        assert gc.get_freeze_count() >= frozen_at_start + 1_000
    assert gc.get_freeze_count() == before == 0
    assert _generation_of(built) == 2


def test_a_cycle_made_in_a_paused_block_is_still_collected_later() -> None:
    class Node:
        other: Node

    with heap.paused():
        node = Node()
        node.other = node
        ref = weakref.ref(node)
        del node
    assert ref() is not None
    gc.collect()
    assert ref() is None


def test_a_nested_paused_block_leaves_the_collector_off_for_the_outer_one() -> None:
    with heap.paused():
        with heap.paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
