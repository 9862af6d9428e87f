"""The composition root of the embedded runtime: one place that wires the adapters together.

``session(state_dir, ...)`` opens the persisted fake cluster (``adapters.fake``), wires the
controller, the suggestion services, the pods' container runtime and metrics collector and the
observation log (``adapters.local``, ``observations.db``) into a ``Runtime``. Every change to
the cluster is committed as it happens (``cluster.db``, SQLite), and the world's own state at
every step and when the command is done, whatever happened; so a command killed at any moment
loses only the write in flight. A lock file keeps two commands from
writing to the same state directory at once (``Busy``: the second one is handed over to the
first, ``holding``: ``app/cli/handover.py``); readers (``get``, ``describe``) take no lock. A
state directory that cannot be used (unwritable, a full disk, ``.lock`` not a file) is an
``InputError`` naming the path (exit status 2), and the state committed before stays intact.

The katib-config given with ``--config`` is stored in the state directory, as a cluster keeps
its ConfigMap, so later commands use it without repeating the flag. A new state directory given
no ``--config`` starts with, and keeps, Katib's shipped katib-config in the local volume mode
(``app.inputs.embedded_config_text``): a FromVolume Suggestion gets a hostPath PV of its own,
whose directory lives under the state directory's ``volumes/``. Keeping it means a later release
with another default never changes the config under the Experiments already there; a state
directory made before this mode, which has a cluster but no stored config, keeps using Katib's
shipped config as it always did.
"""

from __future__ import annotations

import fcntl
import signal
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from katib_resume.adapters import heap
from katib_resume.adapters.fake import FakeCluster, FakeWorld, StateFileError, load
from katib_resume.adapters.fake.persistence import STATE_FILE, close, exists
from katib_resume.adapters.local.observations import FILE as OBSERVATIONS_FILE
from katib_resume.adapters.local.observations import SqliteObservationLog
from katib_resume.app.common.errors import Busy, InputError
from katib_resume.app.common.inputs import embedded_config_text, load_config, read_stored_yaml
from katib_resume.app.embedded import stopping
from katib_resume.app.embedded.options import Options
from katib_resume.app.loop.keys import Key
from katib_resume.core.config import ConfigError, KatibConfig, parse_katib_config

if TYPE_CHECKING:
    from katib_resume.app.embedded.runtime import Runtime

CONFIG_FILE = "katib-config.yaml"
LOCK_FILE = ".lock"
_STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True, slots=True)
class Opened:
    """A state directory's cluster, world and katib-config, opened for writing."""

    cluster: FakeCluster
    world: FakeWorld
    config: KatibConfig


@dataclass(frozen=True, slots=True)
class _Held:
    runtime: Runtime
    state_dir: Path


_HELD: ContextVar[_Held | None] = ContextVar("held", default=None)
"""The runtime of the ``run`` doing another command's request on its own state directory."""


@contextmanager
def holding(runtime: Runtime, state_dir: Path) -> Iterator[None]:
    """Inside the block, a command's ``session`` or ``opened`` of ``state_dir`` is this
    runtime, already open under the lock: how a ``run`` does a request another command left in
    its inbox (``app/cli/serving.py``). The nested command neither locks, opens nor closes."""
    token = _HELD.set(_Held(runtime, state_dir.resolve()))
    try:
        yield
    finally:
        _HELD.reset(token)


def held(state_dir: Path) -> Runtime | None:
    """The runtime of ``holding`` if ``state_dir`` is the directory it holds."""
    found = _HELD.get()
    return found.runtime if found is not None and found.state_dir == state_dir.resolve() else None


@contextmanager
def _focused(runtime: Runtime, options: Options) -> Iterator[Runtime]:
    """The held runtime advancing what the nested command names (as its own session would)
    for as long as the command, then what it advanced before, each of those reconciled at once:
    their changes meanwhile were not queued (``Runtime._enqueue``), and would wait for a resync."""
    before = runtime.focus
    runtime.focus = None if options.focus is None else frozenset(Key(*f) for f in options.focus)
    try:
        yield runtime
    finally:
        runtime.focus = before
        for key in before or ():
            runtime.controller.enqueue(key)


@contextmanager
def opened(options: Options) -> Iterator[Opened]:
    """The state directory opened under its lock, without a runtime: a command that only
    writes an object (``edit``) pays for no informer, controller or suggestion service."""
    state_dir = options.state_dir
    runtime = held(state_dir)
    if runtime is not None:
        yield Opened(runtime.cluster, runtime.world, runtime.controller.config.katib_config())
        return
    with _environment(state_dir), _locked(state_dir), _stopped_as_by_ctrl_c():
        config = _config(options)  # before ``load`` creates the database of a new directory
        try:
            cluster, world = load(state_dir)
        except StateFileError as error:
            raise InputError(str(error)) from None
        try:
            with heap.frozen():  # the opened state is not walked by every collection
                yield Opened(cluster, world, config)
        finally:
            close(world)


@contextmanager
def session(options: Options) -> Iterator[Runtime]:
    """A runtime over the state directory, saved when the block ends.

    The runtime is imported here, not with this module: it brings the suggestion service's
    algorithms (Optuna, SciPy: most of a second), which ``get``, ``describe`` and ``edit``
    never use."""
    from katib_resume.app.embedded.runtime import Runtime

    running = held(options.state_dir)
    if running is not None:
        with _focused(running, options) as runtime:
            yield runtime
        return
    with opened(options) as state:
        observations = SqliteObservationLog(options.state_dir / OBSERVATIONS_FILE)
        try:
            runtime = Runtime(
                state.cluster,
                state.world,
                state.config,
                seed=options.seed,
                trial_command=options.trial_command,
                workdir=options.state_dir / "trials",
                focus=None if options.focus is None else frozenset(Key(*f) for f in options.focus),
                observations=observations,
            )
            try:
                yield runtime
            finally:
                runtime.close()
        finally:
            observations.close()


@contextmanager
def _stopped_as_by_ctrl_c() -> Iterator[None]:
    """SIGTERM and SIGHUP (a closed terminal, ``kill``) stop a command as Ctrl-C does: the
    ``KeyboardInterrupt`` unwinds it, so trial processes are stopped and the world committed.
    Each of the three, SIGINT too (through Python's own handler, unless it is ignored), is
    also kept (``stopping``), so that the runtime's next step raises it again should
    something swallow the exception. (Only the main thread may set handlers; elsewhere, the
    defaults stay.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(number: int, frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        stopping.note(name)  # (so that it stops the command even if the exception is lost)
        handler = previous.get(signal.Signals(number))
        if callable(handler):  # SIGINT's: Python's own (or a test's), which raises it
            handler(number, frame)
        raise KeyboardInterrupt(name)

    previous = {number: signal.getsignal(number) for number in _STOPS}
    if not callable(previous[signal.SIGINT]):  # ignored (a job started in the background)
        del previous[signal.SIGINT]
    for number in previous:
        signal.signal(number, interrupt)
    try:
        with stopping.kept():
            yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def _environment(state_dir: Path) -> Iterator[None]:
    """A state directory the command cannot write to, or a disk that fills up, as one line
    naming the path; whatever was committed before stays as it was."""
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        yield
    except sqlite3.Error as error:
        raise InputError(f"{state_dir / STATE_FILE}: cannot write the state: {error}") from None
    except OSError as error:
        where = error.filename or state_dir
        raise InputError(f"{where}: {error.strerror or error}") from None


def _config(options: Options) -> KatibConfig:
    stored = options.state_dir / CONFIG_FILE
    if options.config is not None:
        config = load_config(options.config)
        stored.write_text(Path(options.config).read_text(encoding="utf-8"), encoding="utf-8")
        return config
    if not stored.exists():
        if exists(options.state_dir):
            return load_config(None)  # made before the local volume mode: keeps Katib's config
        stored.write_text(embedded_config_text(), encoding="utf-8")
    try:
        return parse_katib_config(read_stored_yaml(str(stored)))
    except ConfigError as error:
        raise InputError(f"{stored}: {error}") from None


@contextmanager
def _locked(state_dir: Path) -> Iterator[None]:
    path = state_dir / LOCK_FILE
    if path.exists() and not path.is_file():
        raise InputError(f"{path}: not a file (a lock file is expected here); remove it")
    with path.open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(state_dir) from None
        yield
