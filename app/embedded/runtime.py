"""The embedded runtime: the controller, Kubernetes' own controllers and the local services, on
one fake clock.

One ``step`` is one tick of the simulated world, in the order a cluster would see it:

1. the world ticks (garbage collection, volume binding and reclaim, the kubelet, the Job
   controller and the kubelet of pods, which starts and polls the Trials' processes);
2. suggestion services start or stop with their Deployments (they read the controller's
   watch-fed cache, brought up to date first, as Katib's components share informers);
3. every change since the last step reaches the controller's work queue through the watch (and,
   every ``resync_seconds``, every Experiment and unfinished Trial does; every ``relist_seconds``,
   after those changes, the kinds whose digests differ from the API server's are listed again
   and what differs is reconciled too, the repair of a lost watch event), and the controller
   reconciles every key that is due, until its queue has nothing due: the Experiments, and
   each Trial with the trial reconcile a cluster's controller runs
   (``app.loop.trial_reconcile``: its Job made from ``spec.runSpec``, judged by
   its success and failure conditions, its observation read from the observation log that the
   pods' metrics collector reports to);
4. when nothing moved and Trial processes are running, the step waits for one of them to end
   (at most ``wait_seconds`` of real time), so a long training run neither spins the loop nor
   races the simulated clock far ahead of it;
5. the clock advances by ``tick_seconds``, and the world's own state is committed (a kept
   cluster's changes are committed as they happen: ``adapters.fake.persistence``).

Pods run on a container runtime the runtime installs in the world: with ``trial_command`` the
primary container's command as a local process (``adapters.fake.processes``), else a simulated
container printing the synthetic objective's metrics (``adapters.local.trials.collector``);
either way Katib's collector rules read the output. ``close`` stops every process still running.

A runtime given a ``focus`` reconciles that one Experiment only: a command about one Experiment
never waits on another one that keeps running (one with no trial limit). Kubernetes' own
controllers and the Trials' reconciles still serve every object, so another Experiment's Trials
that were already running finish, and nothing new is started for it.

The controller is the same ``Controller`` a real cluster will use; only the adapters differ. It
reads through an ``Informer`` (a watch-fed cache), so a reconcile costs no API read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from katib_resume.adapters import heap
from katib_resume.adapters.fake import FakeCluster, FakeWorld
from katib_resume.adapters.fake.observations import FakeObservationLog
from katib_resume.adapters.fake.persistence import checkpoint
from katib_resume.adapters.fake.pods import ContainerRuntime, SimulatedRuntime
from katib_resume.adapters.fake.processes import ProcessRuntime
from katib_resume.adapters.local.trials.collector import Collector
from katib_resume.app.embedded import sealing, stopping
from katib_resume.app.embedded.kept import Summaries
from katib_resume.app.embedded.models import ModelsByVersion
from katib_resume.app.embedded.services import ServiceHost
from katib_resume.app.embedded.settled import SettledTrials, finished
from katib_resume.app.embedded.vouched import proved
from katib_resume.app.loop.controller import Controller
from katib_resume.app.loop.informer import KINDS, Change, Informer
from katib_resume.app.loop.keys import Key, Resync, every_key, keys_of, trial_key_of
from katib_resume.app.loop.trial_reconcile import TrialWiring
from katib_resume.core.config import KatibConfig
from katib_resume.core.katib import API_VERSION
from katib_resume.core.objects import key_of as object_key
from katib_resume.core.observation import ObservationLog
from katib_resume.core.ports import ClusterError

DRAIN_LIMIT = 10_000
RESYNC_SECONDS = 60.0
"""Every Experiment is reconciled again this often, changed or not (an informer's resync): a
reconcile that read a stale cache and so missed the event that mattered is repaired by it."""
RUN_KIND = ("batch/v1", "Job")
"""The one run kind the embedded cluster serves (katib-config's default ``trialResources``)."""
METRICS_WAIT = 300.0
"""Simulated seconds a succeeded run's metrics are awaited before MetricsUnavailable."""
RELIST_SECONDS = 30.0
"""The controller's cache is listed again from the API server this often (``Informer.relist``):
the repair of a watch event that was lost, which no resync of the cache can bring back. A relist
compares each kind's digest with the API server's (``core.digest``), lists only the kinds that
differ and wakes only the Experiments whose objects differ: when the watch lost nothing it
costs a comparison per kind, whatever the number of objects, so the period costs a run nothing
that grows with its history (``benchmarks/faults.py`` measures the repair's delay and a
relist's cost)."""


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
        relist_seconds: float = RELIST_SECONDS,
        focus: frozenset[Key] | None = None,
        observations: ObservationLog | None = None,
        wait_seconds: float = 1.0,
    ) -> None:
        self.cluster, self.world, self.tick_seconds = cluster, world, tick_seconds
        self.focus, self.wait_seconds = focus, wait_seconds
        self.clock = cluster.clock
        self.view = cluster.for_cache()
        """The cluster as the cache reads it (the stored objects, not copies)."""
        with heap.paused():  # the first list of every object: see ``step``
            self.informer = Informer(self.view, (*KINDS, RUN_KIND))
        self.caught_up = False
        """Whether the first step is done (the one that catches up with the state opened)."""
        # one cache of models, by version: the controller and the services read the same
        self.parsed = parsed = ModelsByVersion()
        self.services = ServiceHost(self.informer, world.volume_dir, seed, parsed)
        self.kept = Summaries(cluster.store.journal)  # the folds a restart starts from
        self.settled = SettledTrials()
        parsed.book.recall, self.services.result_book.recall = self.kept.trials, self.kept.results
        notes = self.services.result_book.notes  # both books read a block's note, once
        parsed.book.noted = notes.ledger_base  # an Experiment's sealed Trials, from their notes
        self.observations = observations or FakeObservationLog()
        wiring = TrialWiring(self.observations, METRICS_WAIT, frozenset({RUN_KIND}))
        self.controller = Controller(
            self.informer,
            StaticConfig(config),
            self.clock,
            self.services,
            parsed=parsed,
            trials=wiring,
        )
        self.containers = self._containers(trial_command, workdir)
        now = self.clock.now()
        self.resync = Resync(resync_seconds, now + timedelta(seconds=resync_seconds))
        self.relisting = Resync(relist_seconds, now + timedelta(seconds=relist_seconds))
        with heap.paused():  # every summary decoded, every Trial's version read: see ``step``
            self.settled.known |= self.kept.settled()
            self.enqueue_all()

    def _containers(self, trial_command: bool, workdir: Path | None) -> ContainerRuntime:
        """Install the pods' container runtime and metrics collector in the world."""
        collector = Collector(self.informer, self.observations)
        runtime: ContainerRuntime
        runtime = ProcessRuntime() if trial_command else SimulatedRuntime(collector.script)
        pods = self.world.pods
        pods.runtime, pods.on_success = runtime, collector.collect
        pods.started.clear()  # the previous runtime's containers are gone: lost pods, if any
        if workdir is not None:
            pods.root = workdir
        return runtime

    @property
    def busy(self) -> int:
        """How many Trial processes are running."""
        return self.containers.busy

    def enqueue_all(self) -> None:
        """Reconcile every Experiment and every Trial that may have work left (at start). The
        keys are listed through the cache's view of the cluster, which hands out the stored
        objects rather than copies of every one (the keys are all that is read).

        A settled Trial (``settled``: finished, its finalizer in place, nothing left to record)
        whose run object is gone has nothing left for its reconcile to do, so a restart skips
        it: its cost is the Trials with work left, not the history. The Trials sealed in
        blocks (``app.embedded.sealing``) are such Trials, and are not listed; a Trial at a
        version the last command's summaries name settled is passed over unread
        (``app.embedded.settled``). A run object still there wakes its Trial (by owner and by
        name), so a Job a killed command left is deleted."""
        for key in every_key(self.informer.inner):
            self._enqueue(key)
        _, trials, _ = self.view.list_blocks_at(API_VERSION, "Trial")
        for trial in self.settled.unsettled(trials):
            if (ref := trial_key_of(trial)) is not None:
                self._enqueue(ref)
        for run in self.informer.inner.list(*RUN_KIND, None, {}):
            meta = run["metadata"]
            self._enqueue(Key(meta.get("namespace") or "default", meta["name"], "Trial"))
            if (ref := trial_key_of(run)) is not None:
                self._enqueue(ref)

    def resync_all(self) -> None:
        """Every Experiment, and every Trial that has not finished (a finished one changes
        only through the watch): a resync costs no reconcile per Trial of the history, and
        no Python code per settled Trial either (settled implies finished: ``self.settled``
        passes over those at a version it knows in one C-level pass, and the cache's unread
        blocks hold settled Trials only, so they are not read)."""
        for key in every_key(self.informer.inner):
            self._enqueue(key)
        trials = self.informer.held(API_VERSION, "Trial")
        for trial in self.settled.unsettled(trials):
            if not finished(trial) and (ref := trial_key_of(trial)) is not None:
                self._enqueue(ref)

    def pump(self) -> int:
        """Bring the controller's cache up to date and turn the changes into reconcile keys
        (with a relist from the API server after the watch's changes, when one is due: a cache
        that has applied them agrees with the server unless the watch lost, repeated or
        reordered one, so the relist compares digests and lists nothing)."""
        events: list[Change] = [*self.informer.sync()]
        if self.relisting.due(self.clock.now()):
            events += self.informer.relist()
        for event in events:
            if event.type == "DELETED":
                self.parsed.forget(event.object["metadata"].get("uid", ""))
        for key in keys_of((event.object for event in events), trials=True):
            self._enqueue(key)
        return len(events)

    def _enqueue(self, key: Key) -> None:
        """Trials are always served (module docstring); Experiments only when in focus."""
        if self.focus is None or key.kind == "Trial" or key in self.focus:
            self.controller.enqueue(key)

    def drain(self) -> int:
        """Reconcile until no key is due now; the number of reconciles."""
        done = 0
        if self.resync.due(self.clock.now()):
            self.resync_all()
        self.pump()
        while self.controller.due() and done < DRAIN_LIMIT:
            self.controller.step()
            self.pump()
            done += 1
        return done

    def step(self) -> None:
        """One tick; a world error in the services is retried on the next tick.

        The first one catches up with the state opened: every Experiment's Trials parsed and
        folded, each suggestion service restored, thousands of models that hold no reference
        cycle. The cycle collector is paused for it, as for the informer's first list
        (``adapters.heap``): every collection in between would walk them all and free nothing
        (measured: half of that step at 5,000 Trials). It runs again from the next step on."""
        stopping.check()  # a stop signal whose interrupt something swallowed (``stopping``)
        if self.caught_up:
            self._tick()
            return
        with heap.paused():
            self._tick()
        self.caught_up = True

    def _tick(self) -> None:
        before = self.cluster.store.version
        self.world.tick()
        self.pump()  # the services read the same cache, as of now
        with contextlib.suppress(ClusterError):
            self.services.sync()
        self.drain()
        if self.containers.busy and self.cluster.store.version == before:
            self.containers.wait(self.wait_seconds)
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
        """Stop the suggestion services and every Trial process still running, seal each
        Experiment's settled Trials into blocks (``sealing``), and keep the folds of the other
        Trials, the settled ones and what each ledger proved of its Suggestion's assignments
        for the next restart (``kept``, ``vouched``)."""
        try:
            self.services.stop()
        finally:
            self.containers.stop_all()
        store = self.cluster.store
        trials = store.unsealed(API_VERSION, "Trial")  # the Trials sealed before are not read
        self.settled.unsettled(trials)  # those that finished since they were last judged
        book, results = self.parsed.book, self.services.result_book
        sealing.seal(store, book, results, self.settled.known)
        loose = [t for t in trials if object_key(t) not in store.member_of]
        told = {key: proved(self.informer, store, book, key) for key in book.pages}
        self.kept.save(
            book,
            results,
            self.settled.newly(loose),
            lambda: self.settled.by_experiment(loose),  # only for a summary written whole
            {key: vouched for key, vouched in told.items() if vouched is not None},
        )
