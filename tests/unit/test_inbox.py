"""The inbox's moves between two commands (``app/embedded/inbox.py``): each move is made only
from the states it leaves, so of a withdrawal and a take racing for one request exactly one
happens, whatever order the two processes' connections run them in."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.app.embedded import inbox

MOVES = {  # what each side may do, from which states, to which
    "take": ((inbox.PENDING,), inbox.TAKEN),
    "withdraw": ((inbox.PENDING,), inbox.WITHDRAWN),
    "release": ((inbox.FOLLOWING,), inbox.RELEASED),
    "leave": ((inbox.FOLLOWING,), inbox.LEFT),
}


@given(st.lists(st.tuples(st.sampled_from(sorted(MOVES)), st.booleans()), max_size=8))
def test_a_move_happens_only_from_the_states_it_leaves(
    tmp_path_factory: pytest.TempPathFactory, moves: list[tuple[str, bool]]
) -> None:
    state_dir = tmp_path_factory.mktemp("inbox")
    holder, waiter = inbox.Inbox(state_dir), inbox.Inbox(state_dir)
    try:
        ident = waiter.submit(1, "{}")
        state = inbox.PENDING
        for name, by_holder in moves:
            leaving, to = MOVES[name]
            moved = (holder if by_holder else waiter).move(ident, leaving, to)
            assert moved == (state in leaving)
            if moved:
                state = to
            if state == inbox.TAKEN:  # the holder answers a run by following it
                holder.follow(ident, "kubeflow/other", "")
                state = inbox.FOLLOWING
            found = waiter.get(ident)
            assert found is not None and found.state == state
    finally:
        holder.close()
        waiter.close()


def test_the_holder_sees_a_new_request_once_and_drops_those_whose_command_has_gone(
    tmp_path: Path,
) -> None:
    holder, waiter = inbox.Inbox(tmp_path), inbox.Inbox(tmp_path)
    try:
        assert holder.changed()  # the first look always looks
        assert not holder.changed()
        kept, gone = waiter.submit(10, "{}"), waiter.submit(11, "{}")
        assert holder.changed() and not holder.changed()
        assert [ident for ident, _, _ in holder.pending()] == [kept, gone]
        holder.forget(lambda pid: pid == 10)
        assert [ident for ident, _, _ in holder.pending()] == [kept]
        holder.answer(kept, 4, "out", "err")
        assert waiter.get(kept) == inbox.Request(inbox.DONE, 4, "out", "err", None, None)
        assert not holder.changed()  # its own writes are not news to it
    finally:
        holder.close()
        waiter.close()
