"""The work queue's ``next_due`` is the earliest schedule queued, read from its heap."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.app.loop.queue import WorkQueue

T0 = datetime(2020, 1, 1)
moves = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from("abcde"), st.integers(0, 30)),
        st.tuples(st.just("pop"), st.just(""), st.integers(0, 30)),
    ),
    max_size=60,
)


@given(moves)
def test_next_due_is_the_earliest_schedule_of_the_keys_queued(
    script: list[tuple[str, str, int]],
) -> None:
    queue: WorkQueue[str] = WorkQueue()
    schedules: dict[str, datetime] = {}  # the model: each key's earliest schedule
    for move, key, seconds in script:
        now = T0 + timedelta(seconds=seconds)
        if move == "add":
            queue.add(key, T0, seconds)
            schedules[key] = min(schedules.get(key, now), now)
        else:
            popped = queue.pop(now)
            due = {k: d for k, d in schedules.items() if d <= now}
            assert (popped is None) == (not due)
            if popped is not None:
                assert schedules.pop(popped) == min(due.values())
        assert queue.next_due() == min(schedules.values(), default=None)
        assert len(queue) == len(schedules)
