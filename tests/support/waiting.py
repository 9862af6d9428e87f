"""Waiting for something another thread or process brings about, with a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable


def eventually(
    check: Callable[[], bool],
    *,
    seconds: float = 5.0,
    what: str = "the condition",
    between: Callable[[], None] | None = None,
    pause: float = 0.02,
) -> None:
    """Poll ``check`` until it is true; fail with ``what`` once ``seconds`` have passed.

    ``between`` runs after every failed check (to play a part of the world, or to assert that
    what the test waits on is still alive), then the wait ``pause``s before checking again.
    """
    deadline = time.monotonic() + seconds
    while not check():
        if between is not None:
            between()
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached in {seconds:g} s: {what}")
        time.sleep(pause)
