"""The reconcile loop: a level-based work queue of Experiment keys, fed by watch events.

``Controller.step`` pops the earliest due key and reconciles it (gather, plan, apply). World
errors are not failures of the controller: a ``Conflict`` (someone wrote first), an
``Unavailable`` server, a ``NotFound`` or ``AlreadyExists`` race, or an unusable katib-config
requeue the key with exponential backoff; a plan's own ``Requeue`` schedules the key again.
Nothing is remembered between reconciles except the queue and per-key failure counts: the next
reconcile derives everything again from the cluster, so a crash loses nothing.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from pydantic import ValidationError

from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.queue import WorkQueue
from katib_resume.app.loop.reconcile import Parsed, reconcile
from katib_resume.app.loop.trial_reconcile import TrialWiring, as_plan, reconcile_trial, trial_ref
from katib_resume.core.actions import ObjectRef
from katib_resume.core.config import ConfigError
from katib_resume.core.katib import API_VERSION
from katib_resume.core.plan import Plan
from katib_resume.core.ports import (
    Clock,
    Cluster,
    ClusterError,
    ConfigSource,
    SuggestionService,
    TooLarge,
    Unavailable,
)

OBJECTS_GROW = (
    "the Suggestion keeps every assignment of its Experiment and the Experiment every Trial's "
    "name (Katib's API; kubeflow/katib#1847), so this Experiment cannot be given more Trials "
    "than the API server stores"
)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff: ``base`` seconds after the first failure, doubling up to ``cap``."""

    base: float = 0.5
    cap: float = 60.0

    def delay(self, failures: int) -> float:
        """The delay after ``failures`` in a row (the doubling stops at 2**62: past it a
        float overflows, and a reconcile that keeps failing must keep its retries)."""
        return float(min(self.cap, self.base * 2.0 ** min(max(0, failures - 1), 62)))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one reconcile came to: a plan (and maybe a requeue), or the error that stopped it."""

    plan: Plan | None = None
    requeue: float | None = None
    error: Exception | None = None

    @property
    def malformed(self) -> bool:
        """A malformed object got past admission: retrying cannot fix its content."""
        return isinstance(self.error, ValueError)


@dataclass
class Stats:
    """Counters for benchmarks and metrics: what the loop did, not what it decided."""

    reconciles: int = 0
    writes: int = 0
    retries: int = 0
    errors: dict[str, int] = field(default_factory=dict)


def trials_first(key: Key) -> int:
    """Trials before Experiments among the keys due at one instant (``queue``): an Experiment
    woken by several Trial writes in one tick is reconciled once, after them."""
    return 0 if key.kind == "Trial" else 1


class Controller:
    def __init__(
        self,
        cluster: Cluster,
        config: ConfigSource,
        clock: Clock,
        service: SuggestionService | None = None,
        backoff: Backoff | None = None,
        *,
        parsed: Parsed | None = None,
        trials: TrialWiring | None = None,
    ) -> None:
        self.cluster, self.config, self.clock, self.service = cluster, config, clock, service
        self.trials = trials
        """Set when this controller runs Trials (Katib's trial controller) as well."""
        self.backoff = backoff or Backoff()
        self.queue: WorkQueue[Key] = WorkQueue(rank=trials_first)
        self.failures: dict[Key, int] = {}
        self.too_large: set[Key] = set()
        """The keys whose writes the server refuses for their size, already reported."""
        self.stats = Stats()
        self.parsed = parsed or Parsed()

    def enqueue(self, key: Key, after: float = 0.0) -> None:
        self.queue.add(key, self.clock.now(), after)

    def due(self) -> bool:
        """Whether a key is due now."""
        due = self.queue.next_due()
        return due is not None and due <= self.clock.now()

    def step(self) -> Plan | None:
        """Reconcile the earliest due key, if any; its plan when it got that far."""
        key = self.queue.pop(self.clock.now())
        if key is None:
            return None
        return self.settle(key, self.attempt(key, self.parsed))

    def attempt(self, key: Key, parsed: Parsed) -> Outcome:
        """One reconcile of ``key``, with its failure caught: safe to run off the loop's thread
        (it touches only the cluster and ``parsed``, which a worker keeps for itself). A
        malformed object is reported here, with an Event, so that no lock is held meanwhile."""
        try:
            decided, requeue = self._reconcile(key, parsed)
        except (ClusterError, ConfigError) as error:
            return Outcome(error=error)
        except ValueError as error:  # a malformed object got past admission (pydantic's too)
            self._report_malformed(key, error)
            return Outcome(error=error)
        return Outcome(plan=decided, requeue=requeue)

    def _reconcile(self, key: Key, parsed: Parsed) -> tuple[Plan, float | None]:
        config, now = self.config.katib_config(), self.clock.now()
        if key.kind != "Trial":
            return reconcile(self.cluster, key, config, now, self.service, parsed=parsed)
        if self.trials is None:  # not running Trials: such a key is never enqueued
            return Plan(), None
        ref = trial_ref(key.namespace, key.name)
        context = self.trials.context(config)
        decided, requeue = reconcile_trial(
            self.cluster, self.trials.log, ref, context, now, parsed=parsed
        )
        return as_plan(decided), requeue

    def settle(self, key: Key, outcome: Outcome) -> Plan | None:
        """Account for an attempt: requeue, back off or report; the plan when there was one."""
        self.stats.reconciles += 1
        if outcome.malformed:  # reported by ``attempt``; it waits for the object to change
            self.stats.errors["Malformed"] = self.stats.errors.get("Malformed", 0) + 1
            return None
        if outcome.error is not None:
            if isinstance(outcome.error, TooLarge) and key not in self.too_large:
                self.too_large.add(key)  # said once, until the key succeeds again
                self._report_too_large(key, outcome.error)
            self._retry(key, outcome.error)
            return None
        self.failures.pop(key, None)
        self.too_large.discard(key)
        decided = outcome.plan
        if decided is not None:
            self.stats.writes += len(decided.writes)
        if outcome.requeue is not None:
            self.enqueue(key, outcome.requeue)
        return decided

    def _report_malformed(self, key: Key, error: ValueError) -> None:
        """An ``InvalidObject`` Event on the Experiment or Trial (best effort)."""
        ref = ObjectRef(API_VERSION, key.kind, key.namespace, key.name)
        detail = str(error)
        if isinstance(error, ValidationError):
            problems = error.errors()[:3]
            detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in problems)
        with contextlib.suppress(ClusterError):
            self.cluster.record_event(ref, "Warning", "InvalidObject", detail)

    def _report_too_large(self, key: Key, error: TooLarge) -> None:
        """A ``TooLarge`` Warning Event on the Experiment or Trial whose reconcile wrote an object
        the server will not store for its size: nothing else would say why the Experiment stopped
        growing (best effort; the key is still retried, for the object may shrink)."""
        detail = str(error)  # it names the request refused
        if key.kind == "Experiment":
            detail += f"; {OBJECTS_GROW}"
        ref = ObjectRef(API_VERSION, key.kind, key.namespace, key.name)
        with contextlib.suppress(ClusterError):
            self.cluster.record_event(ref, "Warning", "TooLarge", detail)

    def _retry(self, key: Key, error: Exception) -> None:
        name = type(error).__name__
        self.stats.errors[name] = self.stats.errors.get(name, 0) + 1
        self.stats.retries += 1
        failures = self.failures.get(key, 0) + 1
        self.failures[key] = failures
        delay = self.backoff.delay(failures)
        if isinstance(error, Unavailable) and error.retry_after is not None:
            delay = max(delay, error.retry_after)
        self.enqueue(key, delay)
