"""Which Experiment a changed object belongs to: the map from watch events to reconcile keys.

Every object the controller cares about leads back to one Experiment: the Experiment and its
Suggestion share a name; Trials carry the experiment label; the Suggestion's children carry its
controller owner reference; the ownerless PV carries our owner annotation. When the controller
also runs Trials (``trials=True``), a Trial is a key of its own too (kind ``Trial``), and so is
the Trial that controls a changed run object: a Trial's reconcile then costs what that Trial
changed, not what its Experiment holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from katib_resume.core.katib import ANNOTATION_OWNER, API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Cluster


@dataclass(frozen=True, slots=True, order=True)
class Key:
    """A reconcile is keyed by the Experiment: everything else hangs off its name."""

    namespace: str
    name: str
    kind: str = "Experiment"
    """``Experiment`` (everything hanging off it) or ``Trial`` (one Trial and its run object)."""

    def __str__(self) -> str:
        prefix = "" if self.kind == "Experiment" else f"{self.kind} "
        return f"{prefix}{self.namespace}/{self.name}"


def key_of(obj: Manifest) -> Key | None:
    """The Experiment ``obj`` belongs to, if any."""
    meta = obj.get("metadata") or {}
    namespace, kind = meta.get("namespace"), obj.get("kind")
    if obj.get("apiVersion") == API_VERSION and kind in ("Experiment", "Suggestion"):
        return Key(namespace or "default", meta["name"])
    if kind == "Trial":
        experiment = (meta.get("labels") or {}).get(LABEL_EXPERIMENT)
        return Key(namespace or "default", experiment) if experiment else None
    if kind == "PersistentVolume":
        owner = (meta.get("annotations") or {}).get(ANNOTATION_OWNER, "")
        ns, _, name = owner.partition("/")
        return Key(ns, name) if ns and name else None
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == "Suggestion":
            return Key(namespace or "default", ref["name"])
    return None


def trial_key_of(obj: Manifest) -> Key | None:
    """The Trial ``obj`` is, or whose run object it is (its controller owner), if any."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    if obj.get("apiVersion") == API_VERSION and obj.get("kind") == "Trial":
        return Key(namespace, meta["name"], "Trial")
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == "Trial":
            return Key(namespace, ref["name"], "Trial")
    return None


def every_key(cluster: Cluster, *, trials: bool = False) -> list[Key]:
    """Every Experiment's key, then every other Suggestion's (one left without its Experiment
    still needs its cleanup), then (``trials``) every Trial's, each once and in listing order:
    what a resync, a new leader or a lost watch reconciles."""
    keys = [
        key_of(obj)
        for kind in ("Experiment", "Suggestion")
        for obj in cluster.list(API_VERSION, kind, None, {})
    ]
    if trials:
        keys += [trial_key_of(obj) for obj in cluster.list(API_VERSION, "Trial", None, {})]
    return list(dict.fromkeys(key for key in keys if key is not None))


def keys_of(objects: Iterable[Manifest], *, trials: bool = False) -> Iterator[Key]:
    """The keys of changed objects, skipping those that belong to no Experiment (nor, with
    ``trials``, to a Trial)."""
    for obj in objects:
        key = key_of(obj)
        if key is not None:
            yield key
        if trials and (trial := trial_key_of(obj)) is not None:
            yield trial


@dataclass
class Resync:
    """When every Experiment is reconciled again, changed or not (an informer's resync): a
    reconcile that read a stale cache, and so missed the change that mattered, is repaired."""

    seconds: float
    next: datetime

    def due(self, now: datetime) -> bool:
        """Whether a resync is due at ``now`` (the next one is then ``seconds`` later)."""
        if now < self.next:
            return False
        self.next = now + timedelta(seconds=self.seconds)
        return True
