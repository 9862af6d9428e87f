"""A trial command's process group: started on its own, stopped with the command that runs it.

A trial runs in a session (so a process group) of its own, so that a timeout or an interrupted
``katib-resume`` stops its children too, not only the direct child. Three ways it is stopped:

- the runner is interrupted (Ctrl-C, SIGTERM, SIGHUP: all a ``KeyboardInterrupt``) or a run
  times out: the whole group is killed before the exception goes on;
- the runner is killed outright (``kill -9``): on Linux the direct child gets SIGKILL from the
  kernel when its parent dies (``PR_SET_PDEATHSIG``);
- whatever is left of the group (its grandchildren) is killed by the next run of the same Trial,
  before it starts again: the group's id and start time are kept in the Trial's working
  directory (``process.pid``), and the group is killed if its leader is still the same process
  or is gone. A gone leader's group can still hold the grandchildren: Linux never hands out a
  pid that is still some group's id, so a live group with that id is ours; a leader pid in use
  by a process started at another time was recycled, which needs our group to be empty, so it
  is never killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

from katib_resume.adapters import procfs

PID_FILE = "process.pid"
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """``preexec_fn``: SIGKILL when the parent dies (Linux; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group already ended
        os.killpg(pid, signal.SIGKILL)


def remember(workdir: Path, pid: int) -> None:
    with contextlib.suppress(OSError):
        (workdir / PID_FILE).write_text(f"{pid} {procfs.started(pid)}\n")


def forget(workdir: Path) -> None:
    with contextlib.suppress(OSError):
        (workdir / PID_FILE).unlink()


def reap_leftover(workdir: Path) -> None:
    """Kill the group a killed runner left running for this Trial, if it is still there."""
    try:
        pid_text, started = (workdir / PID_FILE).read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return
    if started != procfs.UNKNOWN and procfs.started(pid) in (started, procfs.UNKNOWN):
        kill_group(pid)
    forget(workdir)
