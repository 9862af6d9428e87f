"""The issued points read when asked for, and their set answered from the assignments' bytes.

``Points`` reads as the list of every point, by index, by slice or whole; ``Seen`` answers as
the set of the points and those added since, for any values (quotes, backslashes, text that
looks like an assignment's own JSON, non-ASCII), before and after it builds the set.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import encoded
from katib_resume.adapters.local.suggestion.assignments import assignment
from katib_resume.adapters.local.suggestion.points import FINDS, Points, Seen, seen_of
from katib_resume.adapters.local.suggestion.space import Point
from katib_resume.core.manifest import Manifest

tricky = st.sampled_from(['"', "\\", '"}', '"parameterAssignments":[', '{"name":"x","value":"1"}'])
texts = st.one_of(st.text(max_size=5), tricky, st.sampled_from(["0.1", "1", "a"]))
points = st.lists(st.tuples(st.sampled_from(["x", "y", 'q"']), texts), max_size=3).map(tuple)


def _issued(drawn: list[Point]) -> tuple[Manifest, ...]:
    return tuple(assignment(f"e-{i}", point) for i, point in enumerate(drawn))


@settings(max_examples=200)
@given(drawn=st.lists(points, max_size=8), data=st.data())
def test_points_read_as_the_list_of_every_point(drawn: list[Point], data: st.DataObject) -> None:
    lazy = Points(_issued(drawn))
    if drawn:
        index = data.draw(st.integers(-len(drawn), len(drawn) - 1))
        assert lazy[index] == drawn[index]
    start, stop = data.draw(st.integers(0, 9)), data.draw(st.integers(0, 9))
    assert list(lazy[start:stop]) == drawn[start:stop]
    assert len(lazy) == len(drawn) and lazy == drawn and list(lazy) == drawn
    assert lazy[start:stop] == drawn[start:stop]  # now from the points read


@settings(max_examples=300)
@given(
    drawn=st.lists(points, max_size=8),
    added=st.lists(points, max_size=3),
    asked=st.lists(points, min_size=1, max_size=FINDS + 3),
    data=st.data(),
)
def test_seen_answers_as_the_set_of_the_points(
    drawn: list[Point], added: list[Point], asked: list[Point], data: st.DataObject
) -> None:
    issued = _issued(drawn)
    body = encoded.canonical(list(issued))[1:-1]
    seen = Seen(Points(issued), body)
    for point in added:
        seen.add(point)
    whole = {*drawn, *added}
    asked += data.draw(st.lists(st.sampled_from(drawn), max_size=3)) if drawn else []
    for point in asked:
        assert (point in seen) == (point in whole)
    assert len(seen) == len(whole) and set(seen) == whole


def test_seen_of_points_uses_the_bytes_kept_for_them() -> None:
    issued = _issued([(("x", "1"),), (("x", "2"),)])
    encoded.remember(("ns/e", "tpe", 0, "space"), issued, encoded.canonical(list(issued))[1:-1])
    seen = seen_of(Points(issued))
    assert isinstance(seen, Seen) and seen._body is not None
    assert (("x", "1"),) in seen and (("x", "3"),) not in seen
    assert isinstance(seen_of([(("x", "1"),)]), set)


@settings(max_examples=200)
@given(
    batches=st.lists(st.lists(points, max_size=4), min_size=1, max_size=5),
    asks=st.lists(st.integers(0, FINDS + 2), min_size=5, max_size=5),
    probe=st.lists(points, max_size=4),
)
def test_a_set_moved_to_the_extended_points_is_theirs(
    batches: list[list[Point]], asks: list[int], probe: list[Point]
) -> None:
    """A server's calls: a search asks the points' set (some times, so that it may be built),
    adds its new points, the points are extended with them; each call's set is the set of that
    call's points, whether it was moved from the call before or made anew, and the points left
    behind make their own."""
    drawn: list[Point] = []
    current = Points(_issued(drawn))
    for batch, count in zip(batches, asks, strict=False):
        seen = current.seen()
        for point in [*probe, *drawn][:count]:
            assert (point in seen) == (point in drawn)
        for point in batch:
            seen.add(point)
        before, drawn = current, drawn + batch
        current = current.extended(_issued(drawn), batch)
        assert set(current.seen()) == set(drawn)
        assert set(before.seen()) == set(drawn[: len(drawn) - len(batch)])
