"""The cluster binaries stop on SIGTERM whichever thread the kernel hands the signal to.

A signal sent to a process goes to any of its threads that does not block it, and gRPC's
server threads do not. Python's C-level handler then runs in that thread and only marks the
signal; its Python handler waits for the main thread to run bytecode. ``suggestion-server``'s
main thread used to block in ``Event.wait()`` with no timeout, which such a signal never wakes:
the server ignored SIGTERM until it was killed (a flaky 15 s timeout in the image test).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import signal, sys, threading, time
    from katib_resume.app.common.process import stop_on_signals, wait_until

    stop = threading.Event()
    stop_on_signals(stop, lambda name: print("noted", name, flush=True))

    def elsewhere() -> None:
        time.sleep(0.2)
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # to this thread, not main
        time.sleep(60)

    threading.Thread(target=elsewhere, daemon=True).start()
    if sys.argv[1] == "bare":
        stop.wait()
    else:
        wait_until(stop)
    print("stopped", flush=True)
    """
)


def stops(how: str) -> bool:
    """Whether the script's main thread gets past its wait within 3 s of the signal."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, how],
            check=False,
            capture_output=True,
            text=True,
            timeout=3,
        )
    except subprocess.TimeoutExpired:
        return False
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["noted", "SIGTERM", "stopped"]
    return True


def test_a_signal_to_another_thread_stops_the_wait() -> None:
    assert stops("loop")


@pytest.mark.skipif(sys.platform != "linux", reason="which thread gets a signal is Linux's")
def test_a_bare_wait_is_what_such_a_signal_misses() -> None:
    """The case above is real: without the wake-ups the main thread never runs the handler."""
    assert not stops("bare")
