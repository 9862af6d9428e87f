"""The embedded runtime: the controller, Kubernetes' own controllers and the local services, on
one fake clock.

One ``step`` is one tick of the simulated world, in the order a cluster would see it:

1. the world ticks (garbage collection, volume binding and reclaim, the kubelet);
2. suggestion services start or stop with their Deployments; trials run (both read the
   controller's watch-fed cache, brought up to date first, as Katib's components share
   informers: a tick lists every Suggestion and Trial, and a cache hands them out without
   the API server's private copies);
3. every change since the last step reaches the controller's work queue through the watch (and,
   every ``resync_seconds``, every Experiment does), and the controller reconciles every key
   that is due, until its queue has nothing due;
4. the clock advances by ``tick_seconds``, and the world's own state is committed (a kept
   cluster's changes are committed as they happen: ``adapters.fake.persistence``).

A runtime given a ``focus`` reconciles that one Experiment only: a command about one Experiment
never waits on another one that keeps running (one with no trial limit). Kubernetes' own
controllers and the trial runner still serve every object, so another Experiment's Trials that
were already running finish, and nothing new is started for it.

The controller is the same ``Controller`` a real cluster will use; only the adapters differ. It
reads through an ``Informer`` (a watch-fed cache), so a reconcile costs no API read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from katib_resume.adapters.fake import FakeCluster, FakeWorld
from katib_resume.adapters.fake.persistence import checkpoint
from katib_resume.adapters.local.trials import TrialRunner
from katib_resume.app.embedded.models import ModelsByVersion
from katib_resume.app.embedded.services import ServiceHost
from katib_resume.app.loop.controller import Controller
from katib_resume.app.loop.informer import Informer
from katib_resume.app.loop.keys import Key, Resync, every_key, keys_of
from katib_resume.core.config import KatibConfig
from katib_resume.core.model import Trial
from katib_resume.core.ports import ClusterError

DRAIN_LIMIT = 10_000
RESYNC_SECONDS = 60.0
"""Every Experiment is reconciled again this often, changed or not (an informer's resync): a
reconcile that read a stale cache and so missed the event that mattered is repaired by it."""


@dataclass(frozen=True, slots=True)
class StaticConfig:
    """``core.ports.ConfigSource`` for a katib-config read once (a file, the shipped one)."""

    config: KatibConfig

    def katib_config(self) -> KatibConfig:
        return self.config


class Runtime:
    def __init__(
        self,
        cluster: FakeCluster,
        world: FakeWorld,
        config: KatibConfig,
        *,
        seed: int = 1,
        trial_command: bool = False,
        workdir: Path | None = None,
        tick_seconds: float = 1.0,
        resync_seconds: float = RESYNC_SECONDS,
        focus: frozenset[Key] | None = None,
    ) -> None:
        self.cluster, self.world, self.tick_seconds = cluster, world, tick_seconds
        self.focus = focus
        self.clock = cluster.clock
        self.informer = Informer(cluster.for_cache())
        # one cache of models, by version: all three read the informer's objects
        self.parsed = parsed = ModelsByVersion()
        self.services = ServiceHost(self.informer, world.volume_dir, seed, parsed)
        config_source = StaticConfig(config)
        self.controller = Controller(
            self.informer, config_source, self.clock, self.services, parsed=parsed
        )
        self.trials = TrialRunner(
            self.informer,
            self.clock.now,
            command=trial_command,
            workdir=workdir,
            parse=lambda raw: parsed.parse(Trial, raw),
        )
        self.resync = Resync(resync_seconds, self.clock.now() + timedelta(seconds=resync_seconds))
        self.enqueue_all()

    def enqueue_all(self) -> None:
        """Reconcile every Experiment (at start, and when the watch fell too far behind). The
        keys are listed through the cache's view of the cluster, which hands out the stored
        objects rather than copies of every one (the keys are all that is read)."""
        for key in every_key(self.informer.inner):
            self._enqueue(key)

    def pump(self) -> int:
        """Bring the controller's cache up to date and turn the changes into reconcile keys."""
        events = self.informer.sync()
        if events is None:  # the watch fell behind: everything was listed again
            self.enqueue_all()
            return 0
        for event in events:
            if event.type == "DELETED":
                self.parsed.forget(event.object["metadata"].get("uid", ""))
        for key in keys_of(event.object for event in events):
            self._enqueue(key)
        return len(events)

    def _enqueue(self, key: Key) -> None:
        if self.focus is None or key in self.focus:
            self.controller.enqueue(key)

    def drain(self) -> int:
        """Reconcile until no key is due now; the number of reconciles."""
        done = 0
        if self.resync.due(self.clock.now()):
            self.enqueue_all()
        self.pump()
        while self.controller.due() and done < DRAIN_LIMIT:
            self.controller.step()
            self.pump()
            done += 1
        return done

    def step(self) -> None:
        """One tick; a world error in the services or trials is retried on the next tick."""
        self.world.tick()
        self.pump()  # the services and trials read the same cache, as of now
        with contextlib.suppress(ClusterError):
            self.services.sync()
        with contextlib.suppress(ClusterError):
            self.trials.tick()
        self.drain()
        self.clock.advance(self.tick_seconds)
        checkpoint(self.world)

    def run_until(self, done: Callable[[], bool], max_steps: int = 10_000) -> int:
        """Step until ``done()``; the steps taken. ``TimeoutError`` after ``max_steps``."""
        for steps in range(max_steps):
            if done():
                return steps
            self.step()
        raise TimeoutError(f"not done after {max_steps} steps of the embedded runtime")

    def close(self) -> None:
        self.services.stop()
