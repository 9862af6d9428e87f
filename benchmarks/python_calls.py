"""The Python function calls a piece of work makes: a cost that does not move with the machine.

A restart's time on a shared machine moves by a fifth between runs, which hides whether it does
Python work for every trial; its count of Python calls does not move at all. Counted through
``sys.setprofile`` (the ``call`` events of Python functions; C functions are not counted), and,
to leave the model out (an Optuna study's rebuild and ask: ``algorithms_resume.MODEL``), not
counted inside the functions named. Used by ``algorithms_resume``, ``algorithms_plain`` and
``grpc_service`` (figures) and by ``tests/integration/test_restart_work.py`` (their bound). It
imports nothing of the service's: ``grpc_service`` times a restarted pod's first call in a new
process, and a module imported there beforehand (Optuna's, say) would put its objects in the
heap that call's collections walk.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from types import CodeType, FrameType
from typing import Any


def counted(work: Callable[[], Any], outside: Iterable[CodeType] = ()) -> tuple[int, int]:
    """The Python function calls ``work()`` makes outside any call of a function whose code
    is one of ``outside``, and those inside."""
    skipped, depth, counts = frozenset(outside), [0], [0, 0]

    def profile(frame: FrameType, event: str, _: Any) -> None:
        if event == "call":
            counts[1 if depth[0] else 0] += 1
            if frame.f_code in skipped:
                depth[0] += 1
        elif event == "return" and frame.f_code in skipped:
            depth[0] -= 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(previous)
    return counts[0], counts[1]
