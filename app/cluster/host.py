"""The controller on a live cluster: the embedded runtime's loop on wall time, with workers.

The same ``Controller`` the embedded runtime steps on a fake clock runs here, fed by the k8s
adapter's watches. One dispatcher thread turns the change log into reconcile keys and hands due
keys to ``workers`` threads. A key is never reconciled by two workers at once: a key that
becomes due while it is in flight is marked and queued again when that reconcile ends (the
guarantee client-go's work queue gives). Queue bookkeeping happens under one lock; the
reconciles themselves run outside it, each worker with its own parse cache.

Everything the loop knows is rebuilt from the cluster: stopping loses nothing. ``stop`` lets the
reconciles in flight finish, and nothing new starts.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta

from katib_resume.app.loop.controller import Controller, Outcome
from katib_resume.app.loop.informer import ChangeLog
from katib_resume.app.loop.keys import Key, Resync, every_key, keys_of
from katib_resume.app.loop.reconcile import Parsed
from katib_resume.app.loop.trial_reconcile import TrialWiring
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Clock, ConfigSource, Gone, SuggestionService

log = logging.getLogger("katib_resume.controller")
RESYNC_SECONDS = 600.0


Observer = Callable[[Key, Outcome, float], None]


class Host:
    def __init__(
        self,
        cluster: ChangeLog,
        config: ConfigSource,
        clock: Clock,
        *,
        service: SuggestionService | None = None,
        workers: int = 1,
        observe: Observer | None = None,
        resync_seconds: float = RESYNC_SECONDS,
        poll_seconds: float = 0.05,
        trials: TrialWiring | None = None,
    ) -> None:
        self.cluster, self.clock = cluster, clock
        self.controller = Controller(cluster, config, clock, service, trials=trials)
        self.workers, self.observe = workers, observe
        self.poll_seconds = poll_seconds
        self.lock = threading.Condition()
        self.in_flight: set[Key] = set()
        self.again: set[Key] = set()
        self.ready: list[Key] = []
        self.cursor = 0
        self.resync = Resync(resync_seconds, clock.now() + timedelta(seconds=resync_seconds))

    # -- feeding the queue --------------------------------------------------------------------

    def pump(self) -> int:
        """Turn new changes into keys (every Experiment after a lost log); the number seen."""
        try:
            self.cursor, changes = self.cluster.changes_since(self.cursor)
        except Gone:
            self.cursor = self.cluster.cursor
            self.enqueue_all()
            return 0
        trials = self.controller.trials is not None
        for key in keys_of((change.object for change in changes), trials=trials):
            self.enqueue(key)
        return len(changes)

    def enqueue(self, key: Key) -> None:
        with self.lock:
            if key in self.in_flight:
                self.again.add(key)
            else:
                self.controller.enqueue(key)

    def enqueue_all(self) -> None:
        for key in every_key(self.cluster, trials=self.controller.trials is not None):
            self.enqueue(key)

    # -- running ------------------------------------------------------------------------------

    def dispatch_once(self) -> None:
        """Move every due key to the workers' list."""
        if self.resync.due(self.clock.now()):
            self.enqueue_all()
        self.pump()
        with self.lock:
            while (key := self.controller.queue.pop(self.clock.now())) is not None:
                if key in self.in_flight:
                    self.again.add(key)
                    continue
                self.in_flight.add(key)
                self.ready.append(key)
            if self.ready:
                self.lock.notify_all()

    def work(self, stop: threading.Event) -> None:
        parsed = Parsed()
        while True:
            with self.lock:
                while not self.ready and not stop.is_set():
                    self.lock.wait(self.poll_seconds)
                if stop.is_set():
                    return
                key = self.ready.pop(0)
            started = time.perf_counter()
            outcome = self.controller.attempt(key, parsed)
            elapsed = time.perf_counter() - started
            with self.lock:
                self.controller.settle(key, outcome)
                self.in_flight.discard(key)
                if key in self.again:
                    self.again.discard(key)
                    self.controller.enqueue(key)
            if self.observe is not None:
                self.observe(key, outcome, elapsed)
            _log_outcome(key, outcome, elapsed)

    def run(self, stop: threading.Event, leading: threading.Event | None = None) -> None:
        """Dispatch until ``stop``; reconcile only while ``leading`` (when given) is set."""
        threads = [
            threading.Thread(target=self.work, args=(stop,), name=f"worker-{i}", daemon=True)
            for i in range(self.workers)
        ]
        for thread in threads:
            thread.start()
        was_leading = False
        while not stop.is_set():
            is_leading = leading is None or leading.is_set()
            if is_leading and not was_leading:
                self.enqueue_all()  # a new leader looks at everything once
            was_leading = is_leading
            if is_leading:
                self.dispatch_once()
            stop.wait(self.poll_seconds)
        with self.lock:
            self.lock.notify_all()
        for thread in threads:
            thread.join()


def _log_outcome(key: Key, outcome: Outcome, elapsed: float) -> None:
    fields: Manifest = {"key": str(key), "seconds": round(elapsed, 4)}
    if outcome.error is not None:
        fields["error"] = f"{type(outcome.error).__name__}: {outcome.error}"
        log.warning("reconcile failed", extra=fields)
        return
    decided = outcome.plan
    if decided is not None and decided.writes:
        fields["writes"] = len(decided.writes)
        log.info("reconciled", extra=fields)
