"""The ``run`` holding a state directory does what other commands left in its inbox.

Between two steps of its runtime (``driver.settle``'s ``between``), the holder takes each
pending request of ``app/embedded/inbox.py`` and does it in its own process, on the state it
holds (``bootstrap.holding``: the command's ``session`` or ``opened`` is this runtime), with the
command's output captured as its answer. ``edit``, ``apply`` and ``delete`` are done whole and
answered; a ``delete`` advances only what it reaches while it waits, as it would alone, so the
holder's own Experiment waits for it. A ``run`` is started (created through admission, or
found) and then advanced with the holder's own Experiment: its progress is reported as it
moves, and its report and exit status when it has completed and its Experiment and Suggestion
have stayed as they are for as many steps as a command's settling waits (``QUIET_MARGIN``).

What the holder cannot do as the command would alone is refused, exit status 2, with what to
do instead: another ``--config`` than the stored one, or a ``run`` that wants Trials run as
local processes when the holder's are simulated (``--trial-command``), or the other way round.
A request whose command has gone (killed) is dropped untaken. What the holder does for others is
said on its own stderr, a line each (``did `edit experiment other` for another command (pid
N): exit status 0``, ``advancing kubeflow/other too, ...``, ``no longer advancing ...: why``),
so its terminal tells which Experiments it advances. A pass over the inbox costs one ``PRAGMA
data_version`` unless another command wrote to it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sqlite3
import sys
import traceback
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from katib_resume.app.cli.handover import decoded
from katib_resume.app.common.inputs import load_experiment
from katib_resume.app.embedded import inbox
from katib_resume.app.embedded.bootstrap import CONFIG_FILE, holding
from katib_resume.app.embedded.driver import EXIT_FAILED, QUIET_MARGIN, failure
from katib_resume.app.loop.keys import Key
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.model import Experiment
from katib_resume.core.ports import NotFound

if TYPE_CHECKING:
    from katib_resume.app.embedded.runtime import Runtime

EXIT_BAD_INPUT, EXIT_NOT_FOUND = 2, 1
EXIT_FAULT = 70
"""A request the holder failed to do by a fault of its own (``sysexits``' EX_SOFTWARE)."""


@dataclass(slots=True)
class _Followed:
    """A ``run`` the holder advances for another command."""

    ref: ObjectRef
    pid: int
    """The command's, which reads the answer: the run is dropped if it has gone."""
    progress: str = ""
    versions: tuple[str, str] | None = None
    """Its Experiment's and Suggestion's ``resourceVersion`` at the last step."""
    completed: bool = False
    quiet: int = 0
    """The steps in a row at ``versions``."""


@contextlib.contextmanager
def serving(runtime: Runtime, args: argparse.Namespace) -> Iterator[Server]:
    """A server of the inbox of ``args.state_dir`` for as long as the block."""
    server = Server(runtime, args)
    try:
        yield server
    finally:
        server.close()


class Server:
    def __init__(self, runtime: Runtime, args: argparse.Namespace) -> None:
        self.runtime, self.state_dir = runtime, Path(args.state_dir)
        self.trial_command = bool(getattr(args, "trial_command", False))
        self.own = runtime.focus
        self.followed: dict[int, _Followed] = {}
        self.needed = runtime.world.ready_after_ticks + QUIET_MARGIN
        try:
            self.box: inbox.Inbox | None = inbox.Inbox(self.state_dir)
            self.box.forget(_alive)
        except sqlite3.Error:  # requests then wait for the lock, as a holder that is no run
            self.box = None

    def close(self) -> None:
        """Leave the followed runs to their commands (each takes the lock and goes on)."""
        if self.box is None:
            return
        for ident, followed in self.followed.items():
            if self.box.move(ident, (inbox.FOLLOWING,), inbox.LEFT):
                _say(f"left {followed.ref.namespace}/{followed.ref.name} to its command")
        self.box.close()

    def serve(self) -> None:
        """Report on the followed runs, then do every new request."""
        if self.box is None:
            return
        for ident, followed in list(self.followed.items()):
            self._report(self.box, ident, followed)
        if not self.box.changed():
            return
        if self.followed:
            states = self.box.states(list(self.followed))
            for ident in list(self.followed):
                if states.get(ident) in (inbox.RELEASED, None):
                    self.box.drop(ident)
                    self._unfollow(ident, "released by its command")
        for ident, pid, text in self.box.pending():
            if not _alive(pid):
                if self.box.move(ident, (inbox.PENDING,), inbox.WITHDRAWN):
                    self.box.drop(ident)
            elif self.box.move(ident, (inbox.PENDING,), inbox.TAKEN):
                self._do(self.box, ident, pid, decoded(text))

    def _do(self, box: inbox.Inbox, ident: int, pid: int, args: argparse.Namespace) -> None:
        from katib_resume.app.cli.commands import refusing
        from katib_resume.app.cli.handlers import HANDLERS
        from katib_resume.app.cli.main import answered

        refusal = self._refusal(args)
        if refusal is not None:
            box.answer(ident, EXIT_BAD_INPUT, "", f"katib-resume: error: {refusal}\n")
            return
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err), holding(self.runtime, self.state_dir):
            try:
                if args.command == "run":
                    code = answered(args, lambda: refusing(lambda: self._start(ident, pid, args)))
                else:
                    code = answered(args, lambda: refusing(lambda: HANDLERS[args.command](args)))
            except Exception:  # a fault of ours: the command's to report, not the holder's end
                code = EXIT_FAULT
                print(f"katib-resume: failed doing it: {traceback.format_exc()}", file=sys.stderr)
        followed = self.followed.get(ident)
        if followed is None:
            box.answer(ident, code, out.getvalue(), err.getvalue())
            _say(f"did `{_what(args)}` for another command (pid {pid}): exit status {code}")
            return
        target = f"{followed.ref.namespace}/{followed.ref.name}"
        box.follow(ident, target, err.getvalue())
        _say(f"advancing {target} too, for another command (pid {pid})")
        self._report(box, ident, followed)

    def _start(self, ident: int, pid: int, args: argparse.Namespace) -> int:
        from katib_resume.app.cli.run import begin
        from katib_resume.app.cli.runnable import refuse_unrunnable

        experiment = load_experiment(args.filename) if args.filename else None
        if experiment is not None:
            refuse_unrunnable(experiment)
        ref, _ = begin(self.runtime, experiment, args)
        self.followed[ident] = _Followed(ref, pid)
        key = Key(ref.namespace or "default", ref.name)
        if self.runtime.focus is not None:
            self.runtime.focus = self.runtime.focus | {key}
        self.runtime.controller.enqueue(key)
        return 0

    def _report(self, box: inbox.Inbox, ident: int, followed: _Followed) -> None:
        """The followed run's progress; its report and status once it is completed and at
        rest."""
        from katib_resume.app.cli.run import completed_trials, deleted, report

        cluster = self.runtime.cluster
        if not _alive(followed.pid):
            box.drop(ident)
            self._unfollow(ident, "its command has gone")
            return
        try:
            experiment = cluster.get(followed.ref)
        except NotFound:
            box.answer(ident, EXIT_NOT_FOUND, "", deleted(followed.ref) + "\n")
            self._unfollow(ident, "deleted")
            return
        limit = (experiment.get("spec") or {}).get("maxTrialCount")
        progress = f"{completed_trials(experiment)}/{limit or '-'}"
        if progress != followed.progress:
            followed.progress = progress
            box.report(ident, progress)
        versions = (_version(experiment), _version(self._suggestion(followed.ref)))
        if versions == followed.versions:
            followed.quiet += 1
        else:  # parsed once a version (the controller's models, shared)
            followed.versions, followed.quiet = versions, 0
            followed.completed = self.runtime.parsed.parse(Experiment, experiment).is_completed()
        if followed.completed and followed.quiet >= self.needed:
            failed = failure(cluster, followed.ref)
            code, err = (EXIT_FAILED, f"katib-resume: {failed}\n") if failed else (0, "")
            box.answer(ident, code, report(self.runtime, followed.ref), err)
            self._unfollow(ident, "completed, reported to its command")

    def _suggestion(self, ref: ObjectRef) -> dict[str, object]:
        try:
            return self.runtime.cluster.get(
                ObjectRef(API_VERSION, "Suggestion", ref.namespace, ref.name)
            )
        except NotFound:
            return {}

    def _unfollow(self, ident: int, why: str) -> None:
        followed = self.followed.pop(ident)
        _say(f"no longer advancing {followed.ref.namespace}/{followed.ref.name}: {why}")
        if self.own is not None and self.runtime.focus is not None:
            key = Key(followed.ref.namespace or "default", followed.ref.name)
            others = {Key(f.ref.namespace or "default", f.ref.name) for f in self.followed.values()}
            if key not in self.own and key not in others:
                self.runtime.focus = self.runtime.focus - {key}

    def _refusal(self, args: argparse.Namespace) -> str | None:
        """Why this holder cannot do the command as it would be done alone, and what to do."""
        given = getattr(args, "config", None)
        if given is not None and _text(Path(given)) != _text(self.state_dir / CONFIG_FILE):
            return (
                f"{self.state_dir}: the command using it keeps its katib-config; give --config "
                "once that command has ended, or leave it out"
            )
        wanted = bool(getattr(args, "trial_command", False))
        if args.command == "run" and wanted != self.trial_command:
            how = "as local processes" if self.trial_command else "as simulated containers"
            return (
                f"{self.state_dir}: the run using it runs its Trials {how}; run this one "
                f"{'with' if self.trial_command else 'without'} --trial-command, or once it ends"
            )
        return None


def _say(text: str) -> None:
    """A line on the holder's own stderr: what it does for others is said where it runs."""
    print(f"katib-resume: {text}", file=sys.stderr)


def _what(args: argparse.Namespace) -> str:
    """The command a request holds, in a few words (``edit experiment other``)."""
    words = [str(args.command), *map(str, getattr(args, "targets", None) or ())]
    words += [str(getattr(args, key)) for key in ("kind", "name") if getattr(args, key, None)]
    if getattr(args, "filename", None):
        words += ["-f", str(args.filename)]
    return " ".join(words)


def _version(obj: dict[str, object]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("resourceVersion", "")) if isinstance(metadata, dict) else ""


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
