"""Instrumentation of the handover tests' processes (``test_handover.started``): where a SIGINT
lands, its stack appended to the file ``$KATIB_RESUME_TEST_SIGNALS`` names, then the
``KeyboardInterrupt`` Python's own handler raises. A holder once went on after its SIGINT and
left no trace of where the interrupt went; should it happen again, this file says where it
landed (the fixture's failure shows it)."""

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
