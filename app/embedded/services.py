"""The suggestion services of the embedded runtime: one in-process server per live Deployment.

A suggestion service runs for exactly as long as its Deployment is available, as a pod would:
``sync`` starts a server when the Deployment becomes available (on the directory its pod mounts,
for FromVolume) and stops it when the Deployment goes. The host is the ``SuggestionService`` port
the reconcile shell consults; a call for a service that is not running is ``Unavailable``, as
a gRPC call to a Service without endpoints would be. When a server could not restore its saved
state and rebuilt it from the trial history, the host records a Warning event and passes the
news on with the validation verdict, so that the Suggestion's Running condition says it too.

``sync`` runs on every tick. On a watch cache with an index (``IndexedCache``: the runtime's
informer) it reads only the Suggestions and Deployments that changed since the last tick (the
cache's kind-wide change record), so an idle tick costs nothing per Experiment; on any other
cluster, and whenever the cache cannot say what changed, it reads every Suggestion and its
Deployment. It parses them through a ``Parsed`` it may share with the controller (the embedded
runtime's are one): both read the same watch-fed cache, whose objects are replaced when they
change and never mutated, so an object is parsed once, by whichever asks first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from katib_resume.adapters.local.suggestion import StartReport, SuggestionServer
from katib_resume.adapters.local.suggestion.results import trial_results
from katib_resume.app.embedded.results import ResultBook
from katib_resume.app.loop.keys import Key, key_of
from katib_resume.app.loop.reconcile import Parsed
from katib_resume.core.actions import EventType, ObjectRef
from katib_resume.core.katib import ANNOTATION_SEED, API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Deployment, Experiment, Suggestion, Trial
from katib_resume.core.names import service_name
from katib_resume.core.objects import EVERY, Cursor, IndexedCache
from katib_resume.core.observed import Assignments, Outcome, Validation
from katib_resume.core.plan.children import available
from katib_resume.core.policy import traits
from katib_resume.core.ports import Cluster, ClusterError, NotFound, Unavailable
from katib_resume.core.trials import is_own

VolumeLocator = Callable[[str, str], Path | None]
"""(namespace, deployment name) -> the directory the Deployment's pod mounts, if any."""


@dataclass
class _Running:
    server: SuggestionServer
    report: StartReport
    deployment_uid: str
    deployment: str = ""
    """The Deployment's name (a removal in the change record names only the object)."""


class ServiceHost:
    """Implements ``core.ports.SuggestionService`` over in-process ``SuggestionServer``s."""

    def __init__(
        self, cluster: Cluster, volumes: VolumeLocator, seed: int, parsed: Parsed | None = None
    ) -> None:
        self.cluster, self.volumes, self.seed = cluster, volumes, seed
        self.running: dict[Key, _Running] = {}
        self.known_results: dict[Key, dict[int, tuple[Manifest, dict[str, float | None]]]] = {}
        self.parsed = parsed_models = parsed or Parsed()
        self.result_book = ResultBook(lambda raw: parsed_models.parse(Trial, raw))
        self.cursors: dict[str, Cursor | None] = {"Suggestion": None, "Deployment": None}

    def sync(self) -> None:
        """Start servers for available Deployments, stop those whose Deployment is gone: for
        the Suggestions and Deployments that changed, when the cluster can say which."""
        dirty = self._changed() if isinstance(self.cluster, IndexedCache) else None
        if dirty is None:
            self._sync_all()
            return
        for key in dirty:
            self._sync_one(key)

    def _changed(self) -> set[Key] | None:
        """The keys whose Suggestion or Deployment changed since the last sync (``None``: the
        cache could not say, read everything)."""
        assert isinstance(self.cluster, IndexedCache)
        keys: set[Key] = set()
        complete = False
        for kind, api_version in (("Suggestion", API_VERSION), ("Deployment", "apps/v1")):
            delta = self.cluster.changes(api_version, kind, EVERY, "", self.cursors[kind])
            self.cursors[kind], complete = delta.cursor, complete or delta.complete
            if kind == "Suggestion":
                keys.update(Key(ns or "default", name) for ns, name in delta.removed)
                keys.update(
                    Key(o["metadata"].get("namespace") or "default", o["metadata"]["name"])
                    for o in delta.changed
                )
            else:
                keys.update(k for o in delta.changed if (k := key_of(o)) is not None)
                gone = set(delta.removed)
                keys.update(
                    k for k, r in self.running.items() if (k.namespace, r.deployment) in gone
                )
        return None if complete else keys

    def _sync_one(self, key: Key) -> None:
        try:
            raw = self.cluster.get(ObjectRef(API_VERSION, "Suggestion", key.namespace, key.name))
        except NotFound:
            raw = None
        suggestion = None if raw is None else self.parsed.parse(Suggestion, raw)
        deployment = None if suggestion is None else self._deployment(suggestion)
        current = self.running.get(key)
        if suggestion is None or deployment is None:
            if current is not None:
                self.running.pop(key).server.stop()
        elif current is None or current.deployment_uid != deployment.metadata.uid:
            self._start(key, suggestion, deployment)

    def _sync_all(self) -> None:
        live: set[Key] = set()
        for raw in self.cluster.list(API_VERSION, "Suggestion", None, {}):
            suggestion = self.parsed.parse(Suggestion, raw)
            deployment = self._deployment(suggestion)
            if deployment is None:
                continue
            key = Key(suggestion.namespace, suggestion.name)
            live.add(key)
            current = self.running.get(key)
            if current is None or current.deployment_uid != deployment.metadata.uid:
                self._start(key, suggestion, deployment)
        for key in set(self.running) - live:
            self.running.pop(key).server.stop()

    def validate(self, suggestion: Suggestion) -> Validation:
        running = self.running.get(Key(suggestion.namespace, suggestion.name))
        if running is None:
            return Validation(Outcome.UNAVAILABLE, "suggestion service is not running")
        verdict = running.server.validate()
        if verdict.outcome is Outcome.VALID and running.report.source == "rebuilt":
            return Validation(Outcome.VALID, running.report.reason)
        return verdict

    def get_suggestions(self, suggestion: Suggestion, count: int) -> Assignments:
        running = self.running.get(Key(suggestion.namespace, suggestion.name))
        if running is None:
            raise Unavailable(
                f"suggestion service of {suggestion.namespace}/{suggestion.name} is not running"
            )
        have = suggestion.status.suggestions
        results = self._results(running.server.experiment)
        total = len(have) + count
        items = tuple(running.server.get_suggestions(have, total, results))
        return Assignments(items, exhausted=running.server.exhausted(total))

    def stop(self) -> None:
        for running in self.running.values():
            running.server.stop()
        self.running.clear()

    def _deployment(self, suggestion: Suggestion) -> Deployment | None:
        name = service_name(suggestion.name, suggestion.algorithm)
        try:
            raw = self.cluster.get(ObjectRef("apps/v1", "Deployment", suggestion.namespace, name))
        except NotFound:
            return None
        deployment = self.parsed.parse(Deployment, raw)
        return deployment if available(deployment) else None

    def _start(self, key: Key, suggestion: Suggestion, deployment: Deployment) -> None:
        previous = self.running.pop(key, None)
        if previous is not None:
            previous.server.stop()
        experiment = self._experiment(key)
        if experiment is None:
            return
        has_volume = traits(suggestion.spec.policy).has_volume
        data_dir = self.volumes(key.namespace, deployment.metadata.name) if has_volume else None
        server = SuggestionServer(experiment, self._seed(experiment), data_dir)
        report = server.start(suggestion.status.suggestions)
        uid, name = deployment.metadata.uid or "", deployment.metadata.name
        self.running[key] = _Running(server, report, uid, name)
        self._announce(key, report)

    def _announce(self, key: Key, report: StartReport) -> None:
        """An Event saying how the service found its state (a lost Event is not retried)."""
        ref = ObjectRef(API_VERSION, "Suggestion", key.namespace, key.name)
        kind: EventType = "Warning" if report.source == "rebuilt" else "Normal"
        reason = {"new": "SuggestionStateNew", "restored": "SuggestionStateRestored"}.get(
            report.source, "SuggestionStateRebuilt"
        )
        with contextlib.suppress(ClusterError):
            self.cluster.record_event(ref, kind, reason, report.reason)

    def _seed(self, experiment: Experiment) -> int:
        """The seed the Experiment was applied with (so a resume continues the same search)."""
        recorded = experiment.metadata.annotations.get(ANNOTATION_SEED, "")
        return int(recorded) if recorded.isdigit() else self.seed

    def _results(self, experiment: Experiment) -> Mapping[str, float | None]:
        """The finished Trials' results: on a watch cache with an index, those of the Trials
        that changed since the last call folded into the kept ones (``results.ResultBook``).
        Elsewhere, a Trial object is read once: a cache replaces an object when it changes, so
        an object seen before (same identity) has the same result (one look-up per Trial)."""
        if isinstance(self.cluster, IndexedCache):
            return self.result_book.results(self.cluster, experiment)
        listed = self.cluster.list(
            API_VERSION, "Trial", experiment.namespace, {LABEL_EXPERIMENT: experiment.metadata.name}
        )
        key = Key(experiment.namespace, experiment.metadata.name)
        known, fresh = self.known_results.get(key, {}), {}
        results: dict[str, float | None] = {}
        for raw in listed:
            entry = known.get(id(raw))
            if entry is None or entry[0] is not raw:
                trial = Trial.model_validate(raw)
                own = is_own(experiment, trial)
                entry = (raw, trial_results(experiment, [trial]) if own else {})
            fresh[id(raw)] = entry
            results.update(entry[1])
        self.known_results[key] = fresh
        return results

    def _experiment(self, key: Key) -> Experiment | None:
        try:
            raw = self.cluster.get(ObjectRef(API_VERSION, "Experiment", key.namespace, key.name))
        except NotFound:
            return None
        return self.parsed.parse(Experiment, raw)
