"""A stop signal landing at a chosen line: a deterministic stand-in for a SIGTERM at any moment.

A signal's ``KeyboardInterrupt`` is raised between any two bytecodes of whatever runs. A test
that must hold at every such moment runs the code once per line it executes, the interrupt
raised at that line (by a trace function, at the start of the ``n``-th line event of any frame
the call makes), and checks what is left each time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

Tracer = Callable[[FrameType, str, Any], Any]


def stopped_at(line: int, call: Callable[[], object]) -> bool:
    """Run ``call``, a ``KeyboardInterrupt`` raised at the start of its ``line``-th line (1:
    the first); whether it was stopped (``False``: it finished first, ``line`` is past its
    end). Any other exception is the caller's."""
    seen = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Tracer:
        nonlocal seen
        if event == "line":
            seen += 1
            if seen == line:
                raise KeyboardInterrupt("SIGTERM")
        return tracer

    previous = sys.gettrace()  # (a coverage tool's, say: put back)
    sys.settrace(tracer)
    try:
        call()
    except KeyboardInterrupt:
        return True
    finally:
        sys.settrace(previous)
    return False
