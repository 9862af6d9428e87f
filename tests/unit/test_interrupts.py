"""The stand-in for a stop signal (``tests/support/interrupts.py``) stops only where a signal can.

A ``with`` block's ``__exit__`` is called whatever line of the block a signal lands on: the
interpreter runs a signal's handler inside the block or after the call, never between. A trace
function that raised at the ``with`` line reported again on the way out would leave a lock held
(a suggestion service's encoding cache's: the next command's first save waited for it for good).
"""

from __future__ import annotations

import threading

from tests.support.interrupts import lines_run, stopped_at

_lock = threading.Lock()


def _kept(held: dict[int, int]) -> int | None:
    with _lock:
        found = held.get(1)
    return found


def _returned(held: dict[int, int]) -> int | None:
    with _lock:
        return held.get(1)


def test_a_with_block_stopped_at_any_line_is_exited() -> None:
    for call in (_kept, _returned):
        line, stops = 0, 0
        while stopped_at(line := line + 1, lambda: call({})):  # noqa: B023 (called at once)
            stops += 1
            assert not _lock.locked(), (call.__name__, line)
        assert stops == len(lines_run(lambda: call({}))) >= 2  # noqa: B023
