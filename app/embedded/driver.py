"""Driving the embedded runtime from a command: until something is done *and* nothing moves.

A command such as ``run`` cannot stop at the first step where its goal holds: right after an
``edit`` the Experiment still says Succeeded until the controller has seen the new budget, and a
completion is followed by a teardown (the Deployment and Service go) that the next command must
find finished. So ``settle`` steps until the goal holds and the world is at rest: a few steps in
a row with no write to the cluster, no new Event and no reconcile due.

The loop is bounded twice, so a command never hangs: ``max_steps`` in all, and a stall (an hour
of simulated time with nothing written while the goal does not hold: a controller that keeps
retrying something that cannot succeed) ends it early. Both are ``Unsettled``, exit status 2,
with what was awaited and the last condition seen.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from katib_resume.adapters.fake import FakeCluster, StateFileError
from katib_resume.adapters.fake.persistence import exists, read
from katib_resume.app.common.inputs import InputError
from katib_resume.app.embedded.bootstrap import Options
from katib_resume.app.embedded.runtime import Runtime
from katib_resume.core.kube import Manifest

MAX_STEPS = 100_000
STALL_STEPS = 3_600
"""An hour of simulated time (one step is a second) without a write: nothing will change."""
QUIET_MARGIN = 2
DEFAULT_NAMESPACE = "default"


class Unsettled(InputError):
    """The runtime did not reach what a command waited for within its bounds (exit status 2)."""


def options(args: argparse.Namespace) -> Options:
    return Options(
        state_dir=args.state_dir,
        config=args.config,
        seed=args.seed,
        trial_command=getattr(args, "trial_command", False),
    )


def namespace(args: argparse.Namespace) -> str:
    return str(args.namespace or DEFAULT_NAMESPACE)


def settle(
    runtime: Runtime,
    done: Callable[[], bool],
    what: str,
    *,
    on_step: Callable[[], None] | None = None,
    status: Callable[[], str] | None = None,
    max_steps: int = MAX_STEPS,
) -> int:
    """Step until ``done()`` holds and the world is at rest; the steps taken."""
    quiet, needed = 0, runtime.world.ready_after_ticks + QUIET_MARGIN
    for steps in range(1, max_steps + 1):
        before = _activity(runtime)
        runtime.step()
        still = _activity(runtime) == before and not runtime.controller.due()
        quiet = quiet + 1 if still else 0
        if on_step is not None:
            on_step()
        if quiet >= needed and done():
            return steps
        if quiet >= STALL_STEPS:
            why = f"nothing changed for {quiet} simulated seconds"
            raise Unsettled(_gave_up(what, why, status))
    raise Unsettled(_gave_up(what, f"not done after {max_steps} steps", status))


def _gave_up(what: str, why: str, status: Callable[[], str] | None) -> str:
    seen = f"; last seen: {status()}" if status is not None else ""
    return f"gave up waiting for {what}: {why}{seen}"


def _activity(runtime: Runtime) -> tuple[int, int]:
    """What moves when anything happens: the store's version and the number of Events."""
    return runtime.cluster.store.version, len(runtime.cluster.events)


def read_cluster(state_dir: Path) -> FakeCluster:
    """The cluster as last committed, read only and without the lock: for commands that look
    and must leave the directory as is, also while a ``run`` writes to it.

    A missing state is an empty cluster; nothing is created on disk for it.
    """
    try:
        return read(state_dir)
    except StateFileError as error:
        raise InputError(str(error)) from None


def require_state(state_dir: Path, what: str) -> None:
    """``InputError`` naming ``what`` when ``state_dir`` holds no cluster yet.

    Commands that act on an existing object check this before opening a session, which would
    otherwise create an empty state directory just to report that nothing is there.
    """
    if not exists(state_dir):
        raise InputError(f"{what} not found: no embedded cluster in {state_dir} yet")


def last_condition(obj: Manifest) -> Manifest | None:
    """The condition Katib's printer columns show: the last one stored."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    return conditions[-1] if conditions else None


def condition_text(obj: Manifest) -> str:
    """``Type=Status (Reason): message`` of the last condition, or that there is none yet."""
    last = last_condition(obj)
    if last is None:
        return "no condition yet"
    text = f"{last.get('type')}={last.get('status')} ({last.get('reason', '')})"
    return f"{text}: {last['message']}" if last.get("message") else text
