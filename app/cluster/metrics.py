"""Prometheus metrics of the controller: what it did, and what the cluster looks like to it.

Counters and histograms are fed by the loop (``Metrics.observe``); the gauges of Experiments
and Suggestions by condition are computed when Prometheus scrapes, from the watch-fed cache, so
they cost nothing between scrapes and can never drift from the objects. Restarts and volume
conflicts are counted from the Events the plans record: ``RestartRequested`` on an Experiment
(its transition Succeeded -> Running) and ``OwnershipConflictFound`` on a Suggestion (a PV or
PVC with our name that is not ours). Calls to the suggestion services are counted by the gRPC
client and read at scrape time too. The registry is the metrics' own, not the process-global
one, so tests can build as many as they like.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client import Counter as PromCounter
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from katib_resume.app.loop.controller import Outcome
from katib_resume.app.loop.keys import Key
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Cluster


def result_of(outcome: Outcome) -> str:
    if outcome.error is not None:
        return "malformed" if outcome.malformed else type(outcome.error).__name__
    return "requeue" if outcome.requeue is not None else "success"


SuggestionCalls = Callable[[], Mapping[tuple[str, str], int]]
"""Calls to the suggestion services so far, by (gRPC method, status code name)."""


class Metrics:
    def __init__(
        self,
        cluster: Cluster,
        requests: Callable[[], Mapping[str, int]] | None = None,
        suggestion_calls: SuggestionCalls | None = None,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.reconciles = PromCounter(
            "katib_resume_reconciles",
            "Reconciles of an Experiment, by result",
            ["result"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "katib_resume_reconcile_duration_seconds",
            "Time spent in one reconcile, by result",
            ["result"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )
        self.restarts = PromCounter(
            "katib_resume_restarts", "Experiments restarted", registry=self.registry
        )
        self.conflicts = PromCounter(
            "katib_resume_volume_conflicts",
            "Volumes found with our name that belong to someone else",
            registry=self.registry,
        )
        self.registry.register(_ClusterCollector(cluster, requests, suggestion_calls))

    def observe(self, key: Key, outcome: Outcome, seconds: float) -> None:
        result = result_of(outcome)
        self.reconciles.labels(result).inc()
        self.latency.labels(result).observe(seconds)
        plan = outcome.plan
        if plan is None:
            return
        if plan.experiment is not None and plan.experiment.trigger == "restart_requested":
            self.restarts.inc()
        if plan.suggestion is not None and plan.suggestion.trigger == "ownership_conflict_found":
            self.conflicts.inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


def _by_condition(objects: list[Manifest]) -> Counter[str]:
    """Objects counted under every condition type that is True on them."""
    counts: Counter[str] = Counter()
    for obj in objects:
        for condition in (obj.get("status") or {}).get("conditions") or ():
            if condition.get("status") == "True":
                counts[str(condition.get("type"))] += 1
    return counts


class _ClusterCollector(Collector):
    def __init__(
        self,
        cluster: Cluster,
        requests: Callable[[], Mapping[str, int]] | None,
        suggestion_calls: SuggestionCalls | None,
    ) -> None:
        self.cluster, self.requests = cluster, requests
        self.suggestion_calls = suggestion_calls

    def collect(self) -> Iterator[Metric]:
        for kind in ("Experiment", "Suggestion"):
            family = GaugeMetricFamily(
                f"katib_resume_{kind.lower()}s",
                f"{kind}s by condition type that is True",
                labels=["condition"],
            )
            objects = list(self.cluster.list(API_VERSION, kind, None, {}))
            for condition, count in sorted(_by_condition(objects).items()):
                family.add_metric([condition], count)
            yield family
        if self.requests is not None:
            family = GaugeMetricFamily(
                "katib_resume_api_requests", "API requests sent, by kind", labels=["kind"]
            )
            for kind, count in sorted(self.requests().items()):
                family.add_metric([kind], count)
            yield family
        if self.suggestion_calls is not None:
            calls = CounterMetricFamily(
                "katib_resume_suggestion_calls",
                "gRPC calls to the suggestion services, by method and status code",
                labels=["method", "code"],
            )
            for (method, code), count in sorted(self.suggestion_calls().items()):
                calls.add_metric([method, code], count)
            yield calls
