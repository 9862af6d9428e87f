"""A stop signal a command received, kept until the command ends, so that it is never lost.

Ctrl-C, SIGTERM and SIGHUP stop a command by a ``KeyboardInterrupt`` (``bootstrap``), which
unwinds it so that its Trial processes are stopped and its world committed. But the exception
is raised between any two bytecodes, and code that stands between C and Python may take it for
an error of its own and go on: ``orjson`` turns one raised in its ``default`` hook into a
``TypeError`` (``adapters/fake/codec.py`` raises it again), and ``pydantic-core`` turns one
raised in a model's serializer into a ``PydanticSerializationError``, a ``ValueError`` (a
holding ``run`` whose SIGINT landed in ``config_specs``' ``_omit_empty`` went on advancing its
Experiment, the error taken for a bad object). So the handler also notes the signal here, and
the runtime asks before each step (``Runtime.step``): a stop that something swallowed still
stops the command, one step later.
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
