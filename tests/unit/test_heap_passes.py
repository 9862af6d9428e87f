"""``heap.fewer_passes`` raises the young generation's threshold inside its block only,
leaves the older generations' and a switched-off collector as they were, and puts the
thresholds back whatever happens inside."""

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
