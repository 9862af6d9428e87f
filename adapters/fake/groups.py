"""A container's process group on the node: started to die with its parent, recorded while it
runs, and recognised and stopped by a later command when the one that started it was killed.

A group's record (``<pod>.<container>.pid``) holds its leader's pid and start time. ``reap``
stops the group a record names: by its leader when the pid still belongs to the process that
was started (same start time), or, once the leader is gone (killed with its parent), by a member
that carries ``MARKER=<container>`` in its environment. A group that is neither (a recycled
pid) is never signalled. Linux ``/proc`` is read; elsewhere nothing is recognised.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from katib_resume.adapters import procfs

MARKER = "KATIB_RESUME_CONTAINER"
"""Set to the container's name in its processes' environment: how a later command recognises
what is left of a group whose leader is gone."""
GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL when a command stops what it did not start."""
_PR_SET_PDEATHSIG = 1


def reap(record: Path, marker: str = "") -> bool:
    """Stop the group a dead command left under ``record``, if it still runs; whether there
    was one. The record is removed. The group is recognised by its leader (the same pid and
    start time) or, once the leader has gone (killed with its parent), by a member that
    carries ``marker`` in its environment (``MARKER``); a group that is neither is another's
    (a recycled pid) and is never signalled."""
    try:
        pid_text, started = record.read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return False
    same = started != procfs.UNKNOWN and procfs.started(pid) == started
    found = same or _marked_member(pid, marker)
    if found:
        signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + GRACE
        while _group_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        signal_group(pid, signal.SIGKILL)
    forget(record)
    return found


def signal_group(pgid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group already ended
        os.killpg(pgid, number)


def dying_with_parent(
    argv: tuple[str, ...], env: Mapping[str, str], cwd: Path
) -> tuple[list[str], Callable[[], None] | None]:
    """The argument list and ``preexec_fn`` that make the process die with its parent
    (``PR_SET_PDEATHSIG``, Linux). Through util-linux's ``setpriv --pdeathsig`` where it is
    installed: without a ``preexec_fn`` Python starts the child with ``vfork``, several
    milliseconds less per start than running Python code in a forked child; the executable is
    then looked up here, so that a missing one is still a ``FileNotFoundError``."""
    wrapper = _setpriv()
    if wrapper is None:
        _prctl()
        return list(argv), _die_with_parent
    if not _executable(argv[0], env, cwd):
        raise FileNotFoundError(argv[0])
    return [wrapper, "--pdeathsig", "KILL", "--", *argv], None


def _executable(program: str, env: Mapping[str, str], cwd: Path) -> bool:
    if "/" in program:
        path = cwd / program
        return path.is_file() and os.access(path, os.X_OK)
    return shutil.which(program, path=env.get("PATH", os.defpath)) is not None


@functools.cache
def _setpriv() -> str | None:
    if not sys.platform.startswith("linux"):
        return None
    return shutil.which("setpriv")


@functools.cache
def _prctl() -> Any:
    """libc's ``prctl`` (Linux; else None), looked up once in the parent: the child between
    ``fork`` and ``exec`` then only calls it."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            return ctypes.CDLL(None, use_errno=True).prctl
    return None


def _die_with_parent() -> None:
    """``preexec_fn``: SIGKILL when the parent dies (Linux; elsewhere nothing)."""
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def remember(record: Path, pid: int) -> None:
    with contextlib.suppress(OSError):
        record.write_text(f"{pid} {procfs.started(pid)}\n")


def forget(record: Path) -> None:
    with contextlib.suppress(OSError):
        record.unlink()


def _group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still runs (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def _marked_member(pgid: int, marker: str) -> bool:
    """Whether a live process of group ``pgid`` has ``MARKER=marker`` in its environment."""
    if not marker:
        return False
    wanted = f"{MARKER}={marker}".encode()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid or fields[0] == "Z":
                continue
            if wanted in (stat.parent / "environ").read_bytes().split(b"\0"):
                return True
    return False
