"""Driving the embedded runtime from a command: until something is done *and* nothing moves.

A command such as ``run`` cannot stop at the first step where its goal holds: right after an
``edit`` the Experiment still says Succeeded until the controller has seen the new budget, and a
completion is followed by a teardown (the Deployment and Service go) that the next command must
find finished. So ``settle`` steps until the goal holds and the world is at rest: a few steps in
a row with no write to the cluster, no new Event and no reconcile due.

The loop is bounded twice, so a command never hangs: ``max_steps`` in all, and a stall (an hour
of simulated time with nothing written while the goal does not hold and no Trial process runs:
a controller that keeps retrying something that cannot succeed) ends it early. Both are
``Unsettled``, exit status 2, with what was awaited and the last condition seen.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from katib_resume.adapters import heap
from katib_resume.adapters.fake import FakeCluster, StateFileError
from katib_resume.adapters.fake.persistence import exists, read
from katib_resume.app.common.errors import InputError, NotFoundError
from katib_resume.app.embedded.options import Options
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Cluster, NotFound

if TYPE_CHECKING:  # the runtime (and the suggestion service's algorithms) only where one runs
    from katib_resume.app.embedded.runtime import Runtime

EXIT_FAILED = 4
"""A ``run`` whose Experiment ended Failed: the reason is on stderr (docs/embedded.md)."""
MAX_STEPS = 100_000
STALL_STEPS = 3_600
"""An hour of simulated time (one step is a second) without a write: nothing will change."""
QUIET_MARGIN = 2
DEFAULT_NAMESPACE = "default"


class Unsettled(InputError):
    """The runtime did not reach what a command waited for within its bounds (exit status 2)."""


def options(args: argparse.Namespace, *focus: tuple[str, str]) -> Options:
    """The session's options. The command advances only the Experiments it names (``NAME`` in
    ``-n``, or ``focus``: the (namespace, name) of those a file holds or a deletion reaches);
    naming none, all."""
    name = getattr(args, "name", None)
    if not focus and name is not None:
        focus = ((namespace(args), str(name)),)
    return Options(
        state_dir=args.state_dir,
        config=args.config,
        seed=args.seed,
        trial_command=getattr(args, "trial_command", False),
        focus=frozenset(focus) if focus else None,
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
    max_steps: int | None = MAX_STEPS,
    between: Callable[[], None] | None = None,
) -> int:
    """Step until ``done()`` holds and the world is at rest; the steps taken (``max_steps``
    ``None``: no bound but the stall; ``between``: called after every step, where a ``run``
    does what other commands asked of it). The cycle collector's young generation is
    collected less often meanwhile (``adapters.heap``: a long history's copies are freed by
    reference counting before a collection walks them)."""
    with heap.fewer_passes():
        return _settle(
            runtime,
            done,
            what,
            on_step=on_step,
            status=status,
            max_steps=max_steps,
            between=between,
        )


def _settle(
    runtime: Runtime,
    done: Callable[[], bool],
    what: str,
    *,
    on_step: Callable[[], None] | None,
    status: Callable[[], str] | None,
    max_steps: int | None,
    between: Callable[[], None] | None,
) -> int:
    quiet, needed = 0, runtime.world.ready_after_ticks + QUIET_MARGIN
    bound = itertools.count(1) if max_steps is None else range(1, max_steps + 1)
    for steps in bound:
        before = _activity(runtime)
        runtime.step()
        if between is not None:  # what it writes is the next step's to see: not at rest
            between()
        still = _activity(runtime) == before and not runtime.controller.due()
        quiet = quiet + 1 if still else 0
        if on_step is not None:
            on_step()
        if quiet >= needed and done():
            return steps
        if quiet >= STALL_STEPS and not runtime.busy:  # a Trial process still running is not
            why = f"nothing changed for {quiet} simulated seconds"  # a stall, however long
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
    """kubectl's NotFound (exit status 1) naming ``what`` when ``state_dir`` holds no cluster yet.

    Commands that act on an existing object check this before opening a session, which would
    otherwise create an empty state directory just to report that nothing is there.
    """
    if not exists(state_dir):
        raise NotFoundError(
            f"Error from server (NotFound): {what} not found: "
            f"no embedded cluster in {state_dir} yet"
        )


def failure(cluster: Cluster, ref: ObjectRef) -> str | None:
    """Why the Experiment ended Failed, with its Suggestion's reason when that is what failed
    (Katib's Experiment only says "Suggestion has failed"); ``None`` if it did not fail."""
    experiment = cluster.get(ref)
    last = last_condition(experiment)
    if last is None or last.get("type") != "Failed" or last.get("status") != "True":
        return None
    why = f"Experiment {ref.namespace}/{ref.name} failed: {last.get('message', '')}"
    try:
        suggestion = cluster.get(ObjectRef(API_VERSION, "Suggestion", ref.namespace, ref.name))
    except NotFound:
        return why
    cause = last_condition(suggestion)
    if cause is not None and cause.get("type") == "Failed" and cause.get("message"):
        why += f": {cause['message']}"
    return why


def unlimited(cluster: Cluster, ref: ObjectRef) -> str | None:
    """What a run of an Experiment with no ``maxTrialCount`` does, said when it starts."""
    spec = cluster.get(ref).get("spec") or {}
    if spec.get("maxTrialCount") is not None:
        return None
    return (
        f"Experiment {ref.namespace}/{ref.name} has no maxTrialCount: it runs until its goal, "
        "its maxFailedTrialCount or Ctrl-C"
    )


def small_grid(cluster: Cluster, ref: ObjectRef) -> str | None:
    """What a run of a grid, or a random search of a finite space, with fewer points than its
    ``maxTrialCount`` does, said when it starts: Katib's grid service refuses such an
    Experiment and its random one repeats points, ours runs every point once and succeeds
    (``docs/algorithms.md``), which a user who set the budget expects to be told."""
    spec = cluster.get(ref).get("spec") or {}
    budget = spec.get("maxTrialCount")
    algorithm = (spec.get("algorithm") or {}).get("algorithmName")
    if algorithm not in ("grid", "random") or type(budget) is not int:
        return None
    from katib_resume.adapters.local.suggestion import SpaceError, parse_space

    try:  # (imported here: the commands that only look at the state never need it)
        space = parse_space(spec.get("parameters"))
    except SpaceError:
        return None  # the service's validation says what is wrong
    size = space.grid_size if algorithm == "grid" else space.size
    if size is None or size >= budget:
        return None
    kind, each = ("grid", "cell") if algorithm == "grid" else ("space", "point")
    return (
        f"Experiment {ref.namespace}/{ref.name} searches a {kind} of {size} {each}s, fewer than "
        f"its maxTrialCount {budget}: it succeeds once every {each} has run"
    )


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
