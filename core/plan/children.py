"""The objects a Suggestion owns: which are ours, which are missing, and what to create or delete.

Katib's "ensure" is get-then-create and accepts whatever it finds
(docs/katib-contract.md#suggestion-reconcile): another Experiment's PV, a Deployment that is being
deleted. Here an object counts only if it is *ours* (controller owner reference, or for the
ownerless PV our ownership annotation) and *live* (no ``deletionTimestamp``, fixing bug 21). A
foreign object is never adopted: it is reported as a conflict; a terminating one of ours makes us
wait for its name to become free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from katib_resume.core.actions import Action, Create, Delete, ObjectRef, RecordEvent
from katib_resume.core.config import KatibConfig
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import (
    Deployment,
    OwnedObject,
    PersistentVolume,
    PersistentVolumeClaim,
    Suggestion,
)
from katib_resume.core.observed import Observed
from katib_resume.core.plan.finalizer import suggestion_ref
from katib_resume.core.prebound import prebound_conflicts
from katib_resume.core.resources import (
    desired_deployment,
    desired_rbac,
    desired_service,
    early_stopping_algorithm,
    rbac_wanted,
)
from katib_resume.core.volumes import VolumePlan, claim_conflict, volume_conflict

Child = Deployment | OwnedObject
Present = Child | PersistentVolume | PersistentVolumeClaim | None


def _ref(kind: str, api_version: str, child: Child | Manifest) -> ObjectRef:
    if isinstance(child, dict):
        return ObjectRef.of(child)
    meta = child.metadata
    return ObjectRef(api_version, kind, meta.namespace, meta.name)


def conflicts(observed: Observed, suggestion: Suggestion, volume: VolumePlan | None) -> list[str]:
    """Why some object under our names belongs to someone else (empty: none does)."""
    uid = suggestion.metadata.uid
    named: list[tuple[str, Child | None]] = [
        ("Deployment", observed.deployment),
        ("Service", observed.service),
        *observed.rbac().items(),
    ]
    found = [
        f"{kind} {obj.metadata.namespace}/{obj.metadata.name} is not owned by this Suggestion"
        for kind, obj in named
        if obj is not None and obj.metadata.controller_uid() != uid
    ]
    if volume is not None:
        for message in (
            volume_conflict(volume, observed.pv, uid),
            claim_conflict(volume, observed.pvc, uid),
        ):
            if message is not None:
                found.append(message)
        found += prebound_conflicts(volume, observed.claimants, observed.pvc, uid)
    return found


@dataclass(frozen=True, slots=True)
class Ensured:
    """The creates that bring the children into being, and what we must wait for first."""

    creates: tuple[Create, ...]
    waiting_for: tuple[str, ...]


def ensure(
    observed: Observed, suggestion: Suggestion, config: KatibConfig, volume: VolumePlan | None
) -> Ensured:
    """Create what is missing, in Katib's order: PV, PVC, Service, RBAC, Deployment.

    Manifests are built only for missing objects, so a steady reconcile builds none. Raises
    ``core.config.ConfigError`` when katib-config cannot describe the service.
    """
    creates: list[Create] = []
    waiting: list[str] = []

    def want(kind: str, present: Present, build: Callable[[], Manifest]) -> None:
        if present is None:
            creates.append(Create(build()))
        elif present.metadata.is_deleting:
            waiting.append(f"{kind} {present.metadata.name} to finish terminating")

    service_config = config.suggestion(suggestion.algorithm)
    if volume is not None:
        if volume.volume is not None:
            want("PersistentVolume", observed.pv, volume.volume.manifest)
        want("PersistentVolumeClaim", observed.pvc, volume.claim.manifest)
    want("Service", observed.service, partial(desired_service, suggestion))
    if rbac_wanted(suggestion, service_config):
        present = observed.rbac()
        if any(present[kind] is None for kind in present):
            for manifest in desired_rbac(suggestion):
                want(manifest["kind"], present[manifest["kind"]], partial(dict, manifest))

    def deployment() -> Manifest:
        early = early_stopping_algorithm(suggestion)
        early_config = config.early_stopping(early) if early else None
        return desired_deployment(
            suggestion, service_config, early_config, grpc_probes=config.grpc_probes
        )

    if not claim_terminating(observed, volume):  # a new pod could not start on it, only hold it
        want("Deployment", observed.deployment, deployment)
    return Ensured(tuple(creates), tuple(waiting))


def claim_terminating(observed: Observed, volume: VolumePlan | None) -> bool:
    """The planned volume's PVC is being deleted (by hand: ours goes only with the Suggestion)."""
    return volume is not None and observed.pvc is not None and observed.pvc.metadata.is_deleting


def release_claim(
    observed: Observed, suggestion: Suggestion, volume: VolumePlan | None
) -> tuple[Action, ...]:
    """Delete our Deployment when it is not available and its claim is terminating.

    Its pod cannot start on a terminating claim, and while the Deployment mounts the claim,
    pvc-protection keeps the claim from going: both would wait for ever. Once it is gone, the
    claim goes, and ``ensure`` makes a new one and a new Deployment (the saved state is lost with
    the claim). An available Deployment keeps serving until it stops.
    """
    found, pvc = observed.deployment, observed.pvc
    if volume is None or pvc is None or not pvc.metadata.is_deleting:
        return ()
    if found is None or available(found) or found.metadata.is_deleting:
        return ()
    meta = found.metadata
    if meta.controller_uid() != suggestion.metadata.uid:
        return ()
    why = (
        f"Deployment {meta.namespace}/{meta.name} is deleted: its pod cannot start on the "
        f"terminating PersistentVolumeClaim {pvc.metadata.namespace}/{pvc.metadata.name} and "
        "keeps it from going"
    )
    return (
        Delete(_ref("Deployment", "apps/v1", found), meta.uid or ""),
        RecordEvent(suggestion_ref(suggestion), "Warning", "VolumeTerminating", why),
    )


def available(deployment: Deployment | None) -> bool:
    """Live and Available: the service answers. A terminating Deployment is never the live one
    (Katib bug 21), whatever its conditions still say."""
    return (
        deployment is not None and not deployment.metadata.is_deleting and deployment.is_available()
    )


def teardown(observed: Observed, suggestion: Suggestion) -> tuple[Action, ...]:
    """Delete our live Deployment and Service: names and UIDs come from what is observed, so
    teardown needs no katib-config (Katib bug 8)."""
    uid = suggestion.metadata.uid
    deletes: list[Action] = []
    for kind, api_version, child in (
        ("Deployment", "apps/v1", observed.deployment),
        ("Service", "v1", observed.service),
    ):
        if child is None or child.metadata.is_deleting or child.metadata.controller_uid() != uid:
            continue
        deletes.append(Delete(_ref(kind, api_version, child), child.metadata.uid or ""))
    return tuple(deletes)
