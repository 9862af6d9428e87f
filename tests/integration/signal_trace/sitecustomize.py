"""Instrumentation of the handover tests' processes (``test_handover.started``): where a SIGINT
lands, its stack appended to the file ``$KATIB_RESUME_TEST_SIGNALS`` names, then the
``KeyboardInterrupt`` Python's own handler raises. A holder went on after its SIGINT, and this
file showed where it had landed: in a model serializer, which ``pydantic-core`` runs and whose
exception it turns into a ``ValueError`` (``app/embedded/stopping.py``). The fixture's failure
shows it."""

from __future__ import annotations

import os
import signal
import traceback
from types import FrameType

_PATH = os.environ.get("KATIB_RESUME_TEST_SIGNALS")


def _interrupt(number: int, frame: FrameType | None) -> None:
    assert _PATH is not None
    with open(_PATH, "a", encoding="utf-8") as log:
        log.write(f"signal {number} in pid {os.getpid()}, raised as KeyboardInterrupt at:\n")
        traceback.print_stack(frame, file=log)
    raise KeyboardInterrupt


if _PATH:
    signal.signal(signal.SIGINT, _interrupt)
