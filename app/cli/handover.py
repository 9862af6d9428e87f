"""A writing command whose state directory another command holds: handed over, not refused.

The command leaves its request in the directory's inbox (``app/embedded/inbox.py``) and waits
for the answer of the ``run`` holding the lock, which does it between two of its steps
(``serving``): ``edit``, ``apply`` and ``delete`` print what the holder's doing of them printed
and exit with its status. A ``run`` is answered by the holder advancing that Experiment too:
this command shows its progress as a run of its own does, then its report and status when it
completes. If the holder ends first (its own Experiment done, Ctrl-C, a kill), this command
takes the lock and goes on itself: a request not yet taken is withdrawn and the command done
here, a followed ``run`` continues as ``run NAME``. Ctrl-C here withdraws a request not yet
taken, or has the holder stop advancing the followed Experiment (it stays as it is, for a later
``run NAME``).

A holder that is not a ``run`` (an ``edit``, a ``delete``) serves nothing: it ends soon, and
the request is withdrawn and done here then. Where the inbox cannot be used, the command is
refused as it always was (``Busy``, exit status 2).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path

from katib_resume.app.cli.embedded_flags import DEFAULT_SEED
from katib_resume.app.common.errors import Busy
from katib_resume.app.embedded import inbox
from katib_resume.app.embedded.bootstrap import LOCK_FILE

POLL_SECONDS = 0.1
LEFT_SECONDS = 5.0
HANDED = "is in use by another command: handed over to it (or done here once it ends)"
_PATHS = ("filename", "config")
"""The flags naming files, sent as absolute paths: the holder runs in another directory."""


def hand_over(args: argparse.Namespace) -> int | argparse.Namespace:
    """The exit status the holder answered with, or the command to do here now that the lock
    is free (``args`` itself, or ``run NAME`` of the Experiment the holder advanced)."""
    state_dir = Path(args.state_dir)
    try:
        box = inbox.Inbox(state_dir)
        ident = box.submit(os.getpid(), encoded(args))
    except (OSError, sqlite3.Error):
        raise Busy(state_dir) from None
    print(f"katib-resume: {state_dir} {HANDED}", file=sys.stderr)
    try:
        return _Waiting(box, ident, args).outcome()
    finally:
        box.close()


class _Waiting:
    def __init__(self, box: inbox.Inbox, ident: int, args: argparse.Namespace) -> None:
        self.box, self.ident, self.args = box, ident, args
        self.display = contextlib.ExitStack()
        self.update: Callable[[], None] | None = None
        self.progress = ""
        self.left_at: float | None = None

    def outcome(self) -> int | argparse.Namespace:
        with self.display:
            return self._waited()

    def _waited(self) -> int | argparse.Namespace:
        try:
            while True:
                found = self._step()
                if found is not None:
                    return found
                time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            if self.box.move(self.ident, (inbox.PENDING,), inbox.WITHDRAWN):
                self.box.drop(self.ident)
            self.box.move(self.ident, (inbox.FOLLOWING,), inbox.RELEASED)  # the holder drops it
            raise

    def _step(self) -> int | argparse.Namespace | None:
        request = self.box.get(self.ident)
        if request is not None and request.state == inbox.FOLLOWING:
            self._follow(request)
        if request is not None and request.state != inbox.DONE:
            if not _free(Path(self.args.state_dir)) and not self._given_up(request):
                return None
            request = self.box.get(self.ident)  # after the lock was seen free: all is in it
        if request is None:  # dropped by nobody but this command: the inbox was replaced
            return self.args
        if request.state == inbox.DONE:
            self.box.drop(self.ident)
            self.display.close()  # the progress shown, then the answer
            sys.stdout.write(request.out)
            sys.stderr.write(request.err)
            return int(request.code or 0)
        return self._take_over(request)

    def _given_up(self, request: inbox.Request) -> bool:
        """Whether to stop waiting for a holder that has left the followed run to this command
        (``LEFT``) to let go of the lock: it is exiting, and if another command holds the lock
        after ``LEFT_SECONDS``, the run is handed over to that one."""
        if request.state != inbox.LEFT:
            return False
        if self.left_at is None:
            self.left_at = time.monotonic()
        return time.monotonic() - self.left_at > LEFT_SECONDS

    def _follow(self, request: inbox.Request) -> None:
        """Show the followed run's progress as a ``run`` of its own shows it."""
        if self.update is None:
            from katib_resume.app.cli.run import shown  # (only a run is followed: imported)

            sys.stderr.write(request.err)  # the notices of its start
            self.update = self.display.enter_context(shown(str(request.target), self._counts))
        self.progress = request.progress or self.progress
        self.update()

    def _counts(self) -> tuple[int, int | None]:
        """The holder's ``completed/limit`` (``-``: none) as the two numbers."""
        done, _, limit = self.progress.partition("/")
        return int(done or 0), None if limit in ("", "-") else int(limit)

    def _take_over(self, request: inbox.Request) -> argparse.Namespace | None:
        """The command to do here, the holder having ended; ``None`` if a holder took the
        request meanwhile (its answer comes next). A holder takes a request only while it holds
        the lock, and answers it before it lets go; so a request taken, the lock free, is one
        whose holder was killed doing it, and nobody else will."""
        if request.state == inbox.PENDING and not self.box.move(
            self.ident, (inbox.PENDING,), inbox.WITHDRAWN
        ):
            return None  # a holder took it just now
        if request.state in (inbox.TAKEN, inbox.FOLLOWING) and not _free(Path(self.args.state_dir)):
            return None  # taken by a holder that came after the lock was seen free: it holds it
        self.box.drop(self.ident)
        if request.target is None:  # never taken, or taken by a holder that was killed
            return self.args
        where, name = request.target.split("/", 1)
        self.display.close()
        print(
            f"katib-resume: the command advancing {request.target} ended: continuing it here",
            file=sys.stderr,
        )
        return argparse.Namespace(
            **{
                **vars(self.args),
                "filename": None,
                "name": name,
                "namespace": where,
                "seed": DEFAULT_SEED,
            }
        )


def _free(state_dir: Path) -> bool:
    """Whether no command holds the state directory's lock (taken and let go at once)."""
    try:
        with (state_dir / LOCK_FILE).open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(lock, fcntl.LOCK_UN)
            return True
    except BlockingIOError:
        return False


def encoded(args: argparse.Namespace) -> str:
    """The parsed command as JSON, its files' paths made absolute."""
    fields = {
        key: str(value) if isinstance(value, Path) else value for key, value in vars(args).items()
    }
    for key in _PATHS:
        value = fields.get(key)
        if isinstance(value, str) and value != "-":
            fields[key] = os.path.abspath(value)
    fields["state_dir"] = os.path.abspath(fields["state_dir"])
    return json.dumps(fields)


def decoded(text: str) -> argparse.Namespace:
    fields = json.loads(text)
    return argparse.Namespace(**{**fields, "state_dir": Path(fields["state_dir"])})
