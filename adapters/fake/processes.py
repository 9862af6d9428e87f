"""The node's container runtime for real: a pod's containers as local processes.

Each container runs as an argument list (its ``command`` then ``args``, never through a shell)
in a session, so a process group, of its own, in the pod's working directory, with its stdout
and stderr in one log file there (``<pod>.<container>.log``, as ``kubectl logs`` shows both).
Processes run concurrently and are polled without blocking (``poll``); ``wait`` sleeps until
one of them exits (a ``pidfd`` each, where Linux has them) or a timeout passes.

Stopping is always the whole group: SIGTERM, then SIGKILL once the grace has passed. A group
is stopped when its pod goes (``stop``: the grace runs while the loop goes on), and all of them
when the command that runs them ends (``stop_all``: Ctrl-C, SIGTERM, SIGHUP or a normal end).
When the command is killed outright (``kill -9``) the kernel kills each direct child
(``PR_SET_PDEATHSIG``, Linux); what that child started lives on, out of reach. So every group
is recorded while it runs (``<pod>.<container>.pid``: its id and start time), and a later
command that finds a record of a pod it did not start stops that group before anything else
runs for the pod (``groups.reap``): it is stopped, not adopted, because its exit status, which
decides whether the pod succeeded, can only be waited for by the parent that died.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from katib_resume.adapters.fake.groups import (
    MARKER,
    dying_with_parent,
    forget,
    reap,
    remember,
    signal_group,
)
from katib_resume.core.manifest import Manifest

CLOSE_GRACE = 2.0
"""Seconds a group gets between SIGTERM and SIGKILL when the command itself ends."""


class StartError(Exception):
    """The container could not be started (the message says why, as a kubelet's event does)."""


@dataclass(frozen=True, slots=True)
class Container:
    """What to run: the argument list, the literal environment, the working directory and
    the names the log and the record are kept under."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    workdir: Path
    name: str
    """``<pod>.<container>``: unique on the node."""
    spec_name: str = ""
    """The container's name in its pod."""
    pod: Manifest = field(default_factory=dict)

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.name}.log"

    @property
    def record(self) -> Path:
        return self.workdir / f"{self.name}.pid"


@dataclass
class _Running:
    container: Container
    process: subprocess.Popen[bytes]
    pidfd: int | None
    stop_at: float | None = None
    """When SIGKILL follows the SIGTERM already sent (monotonic seconds), if stopping."""


@dataclass
class ProcessRuntime:
    """Runs containers as local processes (module docstring); keyed by ``Container.name``."""

    running: dict[str, _Running] = field(default_factory=dict)
    exits: dict[str, int] = field(default_factory=dict)
    times: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Per container: wall-clock start and end (``time.time``), for the record."""

    def start(self, container: Container) -> None:
        """Start ``container`` (``StartError`` if it cannot be), after stopping any group a
        dead command left under its record."""
        reap(container.record, container.name)
        env = {**os.environ, **container.env, MARKER: container.name}
        try:
            container.workdir.mkdir(parents=True, exist_ok=True)
            argv, preexec = dying_with_parent(container.argv, env, container.workdir)
            with container.log.open("ab") as log:
                process = subprocess.Popen(
                    argv,
                    cwd=container.workdir,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=preexec,  # noqa: PLW1509 - only a prctl, no lock taken
                )
        except FileNotFoundError:
            raise StartError(f'exec: "{container.argv[0]}": executable file not found') from None
        except OSError as error:
            raise StartError(f"cannot run {container.argv[0]}: {error.strerror or error}") from None
        remember(container.record, process.pid)
        self.running[container.name] = _Running(container, process, _pidfd(process.pid))
        self.times[container.name] = (time.time(), 0.0)

    def poll(self, name: str) -> int | None:
        """The exit code once the container's process has ended (its group is then stopped
        too: a pod's container is over when its main process is); None while it runs."""
        if name in self.exits:
            return self.exits[name]
        entry = self.running.get(name)
        if entry is None:
            return None
        if not _exited(entry.process):
            _escalate(entry)
            return None
        return self._ended(name, entry)

    def stop(self, name: str, grace: float = CLOSE_GRACE) -> None:
        """Begin stopping the container's group: SIGTERM now, SIGKILL once ``grace`` seconds
        have passed (``finish_stopping``, called on every tick, sees to it)."""
        entry = self.running.get(name)
        if entry is not None and entry.stop_at is None:
            signal_group(entry.process.pid, signal.SIGTERM)
            entry.stop_at = time.monotonic() + grace
        self.forget(name)

    def finish_stopping(self) -> None:
        """Poll the groups being stopped: SIGKILL those past their grace, forget the ended."""
        for name in [n for n, e in self.running.items() if e.stop_at is not None]:
            if self.poll(name) is not None:
                self.forget(name)

    def log(self, container: Container) -> str:
        """What the container printed so far (undecodable bytes replaced)."""
        try:
            return container.log.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def recover(self, container: Container) -> None:
        """Stop the group a dead command left running for ``container`` (``reap``)."""
        reap(container.record, container.name)

    def forget(self, name: str) -> None:
        """Drop what is known of an ended container."""
        self.exits.pop(name, None)
        self.times.pop(name, None)

    def stop_all(self, grace: float = CLOSE_GRACE) -> None:
        """Stop every group now: SIGTERM, up to ``grace`` seconds, then SIGKILL (blocking)."""
        for entry in self.running.values():
            signal_group(entry.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while not all(_exited(e.process) for e in self.running.values()):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        for name, entry in list(self.running.items()):
            self._ended(name, entry)

    def wait(self, timeout: float) -> None:
        """Sleep until a running process exits, or ``timeout`` seconds."""
        fds = [e.pidfd for e in self.running.values() if e.pidfd is not None and e.stop_at is None]
        if not fds or len(fds) < len(self.running):
            time.sleep(min(timeout, 0.005))  # no pidfd (or one stopping): poll soon
            return
        with contextlib.suppress(InterruptedError, OSError):
            select.select(fds, [], [], timeout)

    @property
    def busy(self) -> int:
        """How many processes are running."""
        return len(self.running)

    def _ended(self, name: str, entry: _Running) -> int:
        """Kill what the main process left in its group (its pid is not reusable before it is
        reaped, so the group cannot be another's yet), reap it, and record its exit code."""
        signal_group(entry.process.pid, signal.SIGKILL)
        code = entry.process.wait()
        if entry.pidfd is not None:
            os.close(entry.pidfd)
        forget(entry.container.record)
        del self.running[name]
        self.exits[name] = code
        started, _ = self.times.get(name, (time.time(), 0.0))
        self.times[name] = (started, time.time())
        return code


def _exited(process: subprocess.Popen[bytes]) -> bool:
    """Whether the process has ended, without reaping it (``WNOWAIT``), so that its group can
    still be signalled safely; where ``waitid`` is missing, by reaping it."""
    if process.returncode is not None:
        return True
    waitid = getattr(os, "waitid", None)
    if waitid is None:
        return process.poll() is not None
    try:
        info = waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _escalate(entry: _Running) -> None:
    if entry.stop_at is not None and time.monotonic() >= entry.stop_at:
        signal_group(entry.process.pid, signal.SIGKILL)


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd
