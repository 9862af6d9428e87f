"""A stop signal a command received, kept until the command ends, so that it is never lost.

SIGTERM and SIGHUP stop a command as Ctrl-C does: their handler raises ``KeyboardInterrupt``
(``bootstrap``), which unwinds the command so that its Trial processes are stopped and its world
committed. But the exception is raised between any two bytecodes, and code that stands between C
and Python may take it for an error of its own and go on: ``orjson`` turned one raised in its
``default`` hook into a ``TypeError`` (``adapters/fake/codec.py``), and a holding ``run`` was
once seen advancing its Experiment for a minute after its SIGTERM, with no trace of where the
interrupt went. So the handler also notes the signal here, and the runtime asks before each
step (``Runtime.step``): a stop that something swallowed still stops the command, one step
later.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

_received: list[str] = []
_open = [0]
"""How many ``kept`` blocks are open."""


@contextmanager
def kept() -> Iterator[None]:
    """A command: the stop signals noted inside are kept until the outermost block ends (a
    test runs many commands in one process; the next starts with none)."""
    if not _open[0]:
        _received.clear()
    _open[0] += 1
    try:
        yield
    finally:
        _open[0] -= 1
        if not _open[0]:
            _received.clear()


def note(name: str) -> None:
    """Keep that the command received the stop signal ``name`` (its handler's first act)."""
    _received.append(name)


def check() -> None:
    """Raise ``KeyboardInterrupt`` again if a stop signal was received and the command goes on."""
    if _received:
        raise KeyboardInterrupt(_received[0])
