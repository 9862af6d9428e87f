"""PersistentVolumes pre-bound to our claim's name: which one the claim may use.

Kubernetes lets a volume choose its claim: a PV whose ``spec.claimRef`` names a PVC (namespace
and name, no UID yet) is bound to the first PVC created under that name, before any other volume
and before dynamic provisioning is tried. So a PV somebody else made, or one left over from an
earlier claim, can catch the PVC of a FromVolume Suggestion, and the suggestion service then
mounts somebody else's data and overwrites it. The PVC's own ``volumeName`` (the local and
``persistentVolumeSpec`` modes set it) keeps the binder away from such a PV, but not the
provisioned mode, where the claim names no volume.

A PV that names our claim is acceptable only if it is ours (our ownership annotation carries the
Suggestion's UID) or was provisioned for this very claim (Kubernetes' ``provisioned-by``
annotation, and its ``claimRef`` carries the claim's UID). Any other is reported, in both volume
modes, and never used: the planner blocks the Suggestion before it creates the PVC.
"""

from __future__ import annotations

from collections.abc import Iterable

from katib_resume.core.katib import ANNOTATION_OWNER, ANNOTATION_OWNER_UID
from katib_resume.core.model import PersistentVolume, PersistentVolumeClaim
from katib_resume.core.volumes import VolumePlan

ANNOTATION_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
"""Written by a dynamic provisioner on each PV it creates for a claim (Kubernetes' own name)."""


def names_claim(pv: PersistentVolume, namespace: str, claim: str, claim_uid: str | None) -> bool:
    """Whether ``pv`` is (pre-)bound to the claim ``namespace/claim``: its ``claimRef`` names
    it and records no UID or the claim's (a UID of an earlier claim of that name binds nothing)."""
    ref = pv.spec.claim_ref
    if ref is None or (ref.namespace, ref.name) != (namespace, claim):
        return False
    return not ref.uid or ref.uid == claim_uid


def claimants(
    volumes: Iterable[PersistentVolume],
    namespace: str,
    name: str,
    claim: PersistentVolumeClaim | None,
) -> tuple[PersistentVolume, ...]:
    """The live PVs among ``volumes`` (pre-)bound to the claim ``namespace/name`` (``claim``:
    the PVC of that name, if it exists)."""
    uid = claim.metadata.uid if claim is not None else None
    live = (pv for pv in volumes if not pv.metadata.is_deleting)
    return tuple(pv for pv in live if names_claim(pv, namespace, name, uid))


def usable(
    pv: PersistentVolume, claim: PersistentVolumeClaim | None, suggestion_uid: str | None
) -> bool:
    """Ours by annotation, or provisioned for this very claim."""
    if suggestion_uid and pv.owner_uid() == suggestion_uid:
        return True
    ref = pv.spec.claim_ref
    return (
        ANNOTATION_PROVISIONED_BY in pv.metadata.annotations
        and claim is not None
        and ref is not None
        and bool(ref.uid)
        and ref.uid == claim.metadata.uid
    )


def prebound_conflicts(
    plan: VolumePlan,
    volumes: Iterable[PersistentVolume],
    claim: PersistentVolumeClaim | None,
    suggestion_uid: str | None,
) -> list[str]:
    """Why each foreign PV among ``volumes`` (the claimants of our claim) is not used."""
    found = []
    what = f"PersistentVolumeClaim {plan.claim.namespace}/{plan.claim.name}"
    owner = f"Suggestion {plan.claim.owner_key} ({_uid(suggestion_uid)})"
    planned = plan.volume.name if plan.volume is not None else None
    for pv in volumes:
        if pv.metadata.name == planned or usable(pv, claim, suggestion_uid):
            continue  # the PV of our own name is judged by ``volumes.volume_conflict``
        bound = claim is not None and claim.spec.volume_name == pv.metadata.name
        how = "is bound" if bound else "is pre-bound"
        holder = pv.metadata.annotations.get(ANNOTATION_OWNER)
        whose = (
            f"but belongs to {holder} ({_uid(pv.owner_uid())}), not to {owner}"
            if holder
            else f"without the {ANNOTATION_OWNER_UID} annotation of {owner}"
        )
        found.append(f"PersistentVolume {pv.metadata.name} {how} to {what} {whose}; it is not used")
    return found


def _uid(uid: str | None) -> str:
    return f"uid {uid}" if uid else "no uid yet"
