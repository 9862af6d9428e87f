"""A stop signal landing at a chosen line: a deterministic stand-in for a SIGTERM at any moment.

A signal's ``KeyboardInterrupt`` is raised between any two bytecodes of whatever runs. A test
that must hold at every such moment runs the code once per line it executes, the interrupt
raised at that line (by a trace function, at the start of the ``n``-th line event of any frame
the call makes), and checks what is left each time.

One line event is not such a moment: a ``with`` block's normal exit. The interpreter reports
the ``with`` line again before it calls ``__exit__``, outside the block's exception handler, so
an exception raised there leaves ``__exit__`` uncalled (a lock held for good, a transaction left
open); a signal cannot land there, since the interpreter runs a signal's handler only at a call's
return, a backward jump or a function's start, and the last of those before ``__exit__`` is
inside the block. So those events are neither counted nor stopped at (``_exits``).
"""

from __future__ import annotations

import dis
import sys
from collections.abc import Callable
from itertools import count
from types import CodeType, FrameType
from typing import Any

Tracer = Callable[[FrameType, str, Any], Any]
Where = tuple[str, str]
"""A line's code: its file and its function's name."""


def stopped_at(line: int, call: Callable[[], object]) -> bool:
    """Run ``call``, a ``KeyboardInterrupt`` raised at the start of its ``line``-th line (1:
    the first); whether it was stopped (``False``: it finished first, ``line`` is past its
    end). Any other exception is the caller's."""
    seen = count(1)

    def visit(frame: FrameType) -> None:
        if next(seen) == line:
            raise KeyboardInterrupt("SIGTERM")

    try:
        _each_line(call, visit)
    except KeyboardInterrupt:
        return True
    return False


def lines_run(call: Callable[[], object]) -> list[Where]:
    """Run ``call`` to its end; where each line it ran is, in order: ``stopped_at(n, call)``
    stops a run that repeats this one at the ``n``-th."""
    run: list[Where] = []
    _each_line(call, lambda frame: run.append((frame.f_code.co_filename, frame.f_code.co_name)))
    return run


def _each_line(call: Callable[[], object], visit: Callable[[FrameType], None]) -> None:
    """Run ``call``, ``visit(frame)`` at the start of each line it runs but a ``with`` block's
    exit (``_exits``)."""

    def tracer(frame: FrameType, event: str, arg: Any) -> Tracer:
        if event == "line" and frame.f_lasti not in _exits(frame.f_code):
            visit(frame)
        return tracer

    previous = sys.gettrace()  # (a coverage tool's, say: put back)
    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(previous)


_EXITS: dict[CodeType, frozenset[int]] = {}


def _exits(code: CodeType) -> frozenset[int]:
    """Where ``code``'s ``with`` blocks exit normally: the offsets where the call of
    ``__exit__`` starts (any ``SWAP`` setting a returned value aside, ``LOAD_CONST None`` three
    times, then ``CALL 2``)."""
    found = _EXITS.get(code)
    if found is None:
        ops = [(i.offset, i.opname, i.argval) for i in dis.get_instructions(code)]
        ops = [op for op in ops if op[1] != "PRECALL"]  # (3.11's, before each call)
        found = _EXITS[code] = frozenset(ops[at][0] for at in range(len(ops)) if _exit(ops, at))
    return found


def _exit(ops: list[tuple[int, str, Any]], at: int) -> bool:
    """Whether the instructions ``ops`` from ``at`` call a ``with`` block's ``__exit__``."""
    while at < len(ops) and ops[at][1] == "SWAP":
        at += 1
    call = ops[at : at + 4]
    return [op[1:] for op in call] == [("LOAD_CONST", None)] * 3 + [("CALL", 2)]
