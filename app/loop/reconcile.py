"""One reconcile, the shell around the core: gather, decide, act.

``gather`` reads everything the planner may look at for one Experiment (by name: the Suggestion
shares the Experiment's name and its children are ``<name>-<algorithm>``); ``core.plan.plan``
decides, and when it answers with a ``Need`` (the suggestion service's verdict or assignments),
``decide`` asks the service and plans again until a ``Plan`` comes back; ``apply`` performs the
actions in order through the cluster port. Nothing here decides: what to ask the service, and
when to try again after it could not answer, are the core's.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import datetime
from typing import TypeVar, cast

from pydantic import BaseModel

from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.trial_book import TrialBook
from katib_resume.core.actions import (
    AddFinalizer,
    Create,
    Delete,
    ObjectRef,
    RecordEvent,
    RemoveFinalizer,
    Requeue,
    UpdateSpec,
    UpdateStatus,
)
from katib_resume.core.config import KatibConfig
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import (
    Deployment,
    Experiment,
    OwnedObject,
    PersistentVolume,
    PersistentVolumeClaim,
    Suggestion,
    Trial,
)
from katib_resume.core.names import pv_name, service_name
from katib_resume.core.observed import VALID, Assignments, Observed
from katib_resume.core.plan import (
    ASSIGNMENT_RETRY_SECONDS,
    Need,
    NeedValidation,
    Plan,
    plan,
)
from katib_resume.core.policy import traits
from katib_resume.core.ports import Cluster, NotFound, SuggestionService, Unavailable
from katib_resume.core.prebound import claimants
from katib_resume.core.resources import RBAC_API_VERSION

ModelT = TypeVar("ModelT", bound=BaseModel)
__all__ = ["ASSIGNMENT_RETRY_SECONDS", "Parsed", "apply", "decide", "gather", "reconcile"]
MAX_QUESTIONS = 4
"""More than the kinds of ``Need``: each is asked at most once per snapshot."""
log = logging.getLogger("katib_resume.controller")


class Parsed:
    """The models parsed from the objects the cluster handed out, remembered by identity.

    An informer hands out its cache's own objects, replaced (never mutated) when they change,
    so the same object read again parses to the same model: most objects a reconcile reads
    (the children, the Trials, often the Experiment) have not changed since the last one, and
    parsing them is most of the cost of gathering. The entry keeps the object alive, so its
    identity cannot be reused while it is remembered; the least recently used go first.
    The models are frozen and never mutated, so sharing one between reconciles is safe.
    """

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self.entries: dict[tuple[type[BaseModel], int], tuple[Manifest, BaseModel]] = {}
        self.book = TrialBook()
        """Each Experiment's Trials and trial ledger, fed what changed (``trial_book``)."""

    def parse(self, model: type[ModelT], raw: Manifest) -> ModelT:
        key = (model, id(raw))
        entry = self.entries.pop(key, None)
        if entry is None or entry[0] is not raw:
            entry = (raw, model.model_validate(raw))
            if len(self.entries) >= self.limit:
                del self.entries[next(iter(self.entries))]
        self.entries[key] = entry
        return cast(ModelT, entry[1])


def _read(cluster: Cluster, model: type[ModelT], ref: ObjectRef, parsed: Parsed) -> ModelT | None:
    try:
        return parsed.parse(model, cluster.get(ref))
    except NotFound:
        return None


def gather(cluster: Cluster, key: Key, parsed: Parsed | None = None) -> Observed:
    """The snapshot of everything one reconcile of ``key`` may decide from (``parsed``: the
    models of objects parsed before, kept by the caller between reconciles)."""
    parsed = parsed or Parsed()
    ns, name = key.namespace, key.name
    experiment = _read(cluster, Experiment, ObjectRef(API_VERSION, "Experiment", ns, name), parsed)
    suggestion = _read(cluster, Suggestion, ObjectRef(API_VERSION, "Suggestion", ns, name), parsed)
    trials, ledger = parsed.book.read(
        cluster, key, experiment, lambda raw: parsed.parse(Trial, raw)
    )
    if suggestion is None:
        return Observed(ns, name, experiment, suggestion, trials, ledger=ledger)
    child = service_name(name, suggestion.algorithm)

    def owned(api_version: str, kind: str) -> OwnedObject | None:
        return _read(cluster, OwnedObject, ObjectRef(api_version, kind, ns, child), parsed)

    deployment = _read(cluster, Deployment, ObjectRef("apps/v1", "Deployment", ns, child), parsed)
    service = owned("v1", "Service")
    pvc: PersistentVolumeClaim | None = None
    pv: PersistentVolume | None = None
    found: tuple[PersistentVolume, ...] = ()
    if traits(suggestion.spec.policy).has_volume:  # only a volume policy has a PVC and PV
        claim = ObjectRef("v1", "PersistentVolumeClaim", ns, child)
        pvc = _read(cluster, PersistentVolumeClaim, claim, parsed)
        volume = ObjectRef("v1", "PersistentVolume", None, pv_name(name, suggestion.algorithm, ns))
        pv = _read(cluster, PersistentVolume, volume, parsed)
        found = _claimants(cluster, claim, pvc, parsed)
    rbac: tuple[OwnedObject | None, ...] = (None, None, None)
    if suggestion.spec.early_stopping is not None:  # only early stopping has RBAC objects
        rbac = (
            owned("v1", "ServiceAccount"),
            owned(RBAC_API_VERSION, "Role"),
            owned(RBAC_API_VERSION, "RoleBinding"),
        )
    return Observed(  # built once: each ``dataclasses.replace`` copies every field again
        ns,
        name,
        experiment,
        suggestion,
        trials,
        deployment=deployment,
        service=service,
        pvc=pvc,
        pv=pv,
        claimants=found,
        service_account=rbac[0],
        role=rbac[1],
        role_binding=rbac[2],
        ledger=ledger,
    )


def _claimants(
    cluster: Cluster, claim: ObjectRef, pvc: PersistentVolumeClaim | None, parsed: Parsed
) -> tuple[PersistentVolume, ...]:
    """The PVs whose ``claimRef`` names our claim (``core.prebound``). Once the PVC is bound,
    only the PV it is bound to (one read); before, every cached PV is looked at, which happens
    while a claim is being created or waits to bind, not in a steady reconcile."""
    namespace, name = claim.namespace or "", claim.name
    if pvc is not None and pvc.is_bound() and pvc.spec.volume_name:
        bound = ObjectRef("v1", "PersistentVolume", None, pvc.spec.volume_name)
        found = _read(cluster, PersistentVolume, bound, parsed)
        return claimants((found,) if found else (), namespace, name, pvc)
    named = [
        parsed.parse(PersistentVolume, raw)
        for raw in cluster.list("v1", "PersistentVolume", None, {})
        if _claim_ref(raw) == (namespace, name)
    ]
    return claimants(named, namespace, name, pvc)


def _claim_ref(pv: Manifest) -> tuple[object, object]:
    ref = (pv.get("spec") or {}).get("claimRef") or {}
    return ref.get("namespace"), ref.get("name")


def apply(cluster: Cluster, decided: Plan) -> float | None:
    """Perform ``decided`` in order; the shortest requested requeue delay, if any."""
    versions: dict[ObjectRef, str | None] = {}
    requeue: float | None = None
    for action in decided.actions:
        if isinstance(action, Create):
            cluster.create(action.manifest)
        elif isinstance(action, Delete):
            with contextlib.suppress(NotFound):  # already gone: the goal of a delete
                cluster.delete(action.ref, action.uid)
        elif isinstance(action, AddFinalizer | RemoveFinalizer):
            rv = versions.get(action.ref, action.resource_version)
            written = cluster.set_finalizers(action.ref, action.finalizers, rv)
            versions[action.ref] = written["metadata"].get("resourceVersion")
        elif isinstance(action, UpdateStatus):
            rv = versions.get(action.ref, action.resource_version)
            written = cluster.update_status(action.ref, action.status, rv)
            versions[action.ref] = written["metadata"].get("resourceVersion")
        elif isinstance(action, UpdateSpec):
            rv = versions.get(action.ref, action.resource_version)
            written = cluster.update_spec(action.ref, action.spec, rv)
            versions[action.ref] = written["metadata"].get("resourceVersion")
        elif isinstance(action, RecordEvent):
            cluster.record_event(action.ref, action.type, action.reason, action.message)
        elif isinstance(action, Requeue):
            requeue = (
                action.after_seconds if requeue is None else min(requeue, action.after_seconds)
            )
    return requeue


def decide(
    observed: Observed, config: KatibConfig, now: datetime, service: SuggestionService | None
) -> Plan:
    """Plan, answering what the core asks of the suggestion service until it has a plan."""
    for _ in range(MAX_QUESTIONS):
        result = plan(observed, config, now)
        if isinstance(result, Plan):
            return result
        observed = answer(result, observed, service)
    raise AssertionError(f"the planner kept asking: {result}")


def answer(need: Need, observed: Observed, service: SuggestionService | None) -> Observed:
    """``observed`` with the service's answer to ``need``.

    Without a service the settings count as valid (Katib's ``Unimplemented``) and no assignment
    comes. An unreachable service is not an error of the reconcile: validation reports it as
    ``Unavailable`` (the planner retries), and assignments it could not give are ``None`` (the
    planner asks to be requeued: nothing else would change to wake it).
    """
    if isinstance(need, NeedValidation):
        return need.answer(observed, service.validate(need.suggestion) if service else VALID)
    fetched: Assignments | None = None
    if service is not None:
        try:
            fetched = service.get_suggestions(need.suggestion, need.count)
        except Unavailable as error:
            key = f"{observed.namespace}/{observed.name}"
            log.info("no assignments this time", extra={"key": key, "error": str(error)})
    return need.answer(observed, fetched)


def reconcile(
    cluster: Cluster,
    key: Key,
    config: KatibConfig,
    now: datetime,
    service: SuggestionService | None = None,
    *,
    parsed: Parsed | None = None,
) -> tuple[Plan, float | None]:
    """Gather, decide, act: one level-based reconcile of the Experiment ``key``; the plan and
    the delay after which it asked to be looked at again, if any."""
    decided = decide(gather(cluster, key, parsed), config, now, service)
    return decided, apply(cluster, decided)
