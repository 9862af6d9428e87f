"""``app.common.serving``: blocking work leaves the loop, and a stuck call never holds up a stop."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pytest

from katib_resume.app.common.serving import BackgroundLoop, blocking


def test_results_and_exceptions_come_back_from_the_thread() -> None:
    loop = BackgroundLoop("test")
    loop.start()
    try:
        assert loop.run(blocking(lambda: threading.current_thread().name)) == "blocking"

        def fails() -> None:
            raise ValueError("no")

        with pytest.raises(ValueError, match="no"):
            loop.run(blocking(fails))
    finally:
        loop.stop()


def test_a_stuck_call_is_abandoned_when_the_loop_stops() -> None:
    """As on SIGTERM with a decision waiting on an unreachable API server: the stop is at once,
    and the thread's late answer is dropped."""
    loop, release = BackgroundLoop("test"), threading.Event()
    loop.start()

    async def waiting() -> None:
        await blocking(lambda: release.wait(10))

    outcome: list[str] = []

    def caller() -> None:
        try:
            loop.run(waiting())
        except concurrent.futures.CancelledError:
            outcome.append("cancelled")

    pending = threading.Thread(target=caller)
    pending.start()
    time.sleep(0.1)
    started = time.monotonic()
    loop.stop()
    assert time.monotonic() - started < 1
    release.set()  # the thread ends after the loop closed: nothing raises
    pending.join(5)
    assert outcome == ["cancelled"]  # the caller was told, not left waiting
