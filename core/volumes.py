"""The volume of ``resumePolicy: FromVolume``: what PVC and PV to create, and whose they are.

Katib creates a PVC ``<name>-<algorithm>`` from the katib-config entry and, when the entry has a
non-empty ``persistentVolumeSpec``, a cluster-scoped PV ``<name>-<algorithm>-<namespace>`` with
the spec verbatim and ``persistentVolumeReclaimPolicy: Delete`` (docs/katib-contract.md#volumes).
That leaves the four problems of bugs 4 and 6, which this plan fixes:

(a) *Pre-binding.* Katib's PV is not tied to its PVC, so the claim may bind another PV (or a
    dynamically provisioned one) and the PV stays ``Available`` for ever. Here the PV's
    ``claimRef`` names the PVC and the PVC's ``volumeName`` names the PV: they bind to each other
    or not at all.
(b) *No owner reference on the PV.* A namespaced owner of a cluster-scoped object is invalid
    (docs/katib-contract.md#owner-references); the PV records its Suggestion in annotations instead
    (``ANNOTATION_OWNER_UID`` and ``ANNOTATION_OWNER``), and our finalizer on the Suggestion deletes
    it.
(c) *A directory per PV.* A configured ``hostPath.path`` is a prefix: the PV uses
    ``<prefix>/<pv-name>``, so two Experiments never share (or wipe) one directory.
(d) *The PVC is owned.* It carries the Suggestion as controller owner and is collected with it.

The PV's spec comes from ``core.local_volumes.volume_source``: the entry's ``persistentVolumeSpec``
or, for a claim of storage class ``katib-suggestion`` without one, the seed design's local hostPath
PV (prefix ``localVolumePathPrefix``). Both then go through the same rules above.

Existing objects are never adopted: ``claim_conflict`` and ``volume_conflict`` say, in words a
user can act on, why an object with our name is not ours; the planner reports that instead of
mounting somebody else's data.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from katib_resume.core.config import SuggestionConfig
from katib_resume.core.katib import ANNOTATION_OWNER, ANNOTATION_OWNER_UID, RECLAIM_POLICY_DELETE
from katib_resume.core.local_volumes import VolumeSource, volume_source
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import PersistentVolume, PersistentVolumeClaim, Suggestion
from katib_resume.core.names import pv_name, service_name
from katib_resume.core.resources import owner_reference


@dataclass(frozen=True, slots=True)
class ClaimPlan:
    """The PVC: ``spec`` and ``owner`` are never shared; ``manifest`` returns fresh copies."""

    namespace: str
    name: str
    spec: Manifest = field(hash=False)
    owner: Manifest = field(hash=False)

    @property
    def volume_name(self) -> str | None:
        """The PV the claim is pre-bound to, if the plan has one."""
        name = self.spec.get("volumeName")
        return str(name) if name else None

    @property
    def owner_key(self) -> str:
        """``<namespace>/<name>`` of the owning Suggestion."""
        return f"{self.namespace}/{self.owner['name']}"

    def manifest(self) -> Manifest:
        metadata: Manifest = {"name": self.name, "namespace": self.namespace}
        metadata["ownerReferences"] = [copy.deepcopy(self.owner)]
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": metadata,
            "spec": copy.deepcopy(self.spec),
        }


@dataclass(frozen=True, slots=True)
class PersistentVolumePlan:
    """The cluster-scoped PV: labels from the config, owner recorded in annotations."""

    name: str
    labels: dict[str, str] | None = field(hash=False)
    annotations: dict[str, str] = field(hash=False)
    spec: Manifest = field(hash=False)

    def manifest(self) -> Manifest:
        metadata: Manifest = {"name": self.name}
        if self.labels is not None:
            metadata["labels"] = dict(self.labels)
        metadata["annotations"] = dict(self.annotations)
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": metadata,
            "spec": copy.deepcopy(self.spec),
        }


@dataclass(frozen=True, slots=True)
class VolumePlan:
    claim: ClaimPlan
    volume: PersistentVolumePlan | None


def per_volume_path(prefix: str, volume: str) -> str:
    """Rule (c): the PV's own directory under the configured ``hostPath`` prefix."""
    return f"{prefix.rstrip('/')}/{volume}"


def volume_plan(suggestion: Suggestion, config: SuggestionConfig) -> VolumePlan:
    """The PVC (and, when configured or local, the PV) of a FromVolume ``suggestion``."""
    claim_name = service_name(suggestion.name, suggestion.algorithm)
    source = volume_source(config)
    volume = _volume(suggestion, source, claim_name) if source is not None else None
    spec = config.persistent_volume_claim_spec.spec()
    if volume is not None:
        spec["volumeName"] = volume.name
    claim = ClaimPlan(suggestion.namespace, claim_name, spec, owner_reference(suggestion))
    return VolumePlan(claim, volume)


def _volume(suggestion: Suggestion, source: VolumeSource, claim_name: str) -> PersistentVolumePlan:
    name = pv_name(suggestion.name, suggestion.algorithm, suggestion.namespace)
    spec = copy.deepcopy(source.spec)
    spec["persistentVolumeReclaimPolicy"] = RECLAIM_POLICY_DELETE
    spec["claimRef"] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": suggestion.namespace,
        "name": claim_name,
    }
    host_path = spec.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("path"):
        host_path["path"] = per_volume_path(str(host_path["path"]), name)
    annotations = {ANNOTATION_OWNER: f"{suggestion.namespace}/{suggestion.name}"}
    if suggestion.metadata.uid:
        annotations[ANNOTATION_OWNER_UID] = suggestion.metadata.uid
    labels = dict(source.labels) if source.labels is not None else None
    return PersistentVolumePlan(name, labels, annotations, spec)


def _uid(uid: str | None) -> str:
    return f"uid {uid}" if uid else "no uid yet"


def claim_conflict(
    plan: VolumePlan, observed_pvc: PersistentVolumeClaim | None, suggestion_uid: str | None
) -> str | None:
    """Why the observed PVC of our name is not ours (never adopted), or ``None`` if it is."""
    if observed_pvc is None:
        return None
    what = f"PersistentVolumeClaim {plan.claim.namespace}/{plan.claim.name}"
    owner = f"Suggestion {plan.claim.owner_key} ({_uid(suggestion_uid)})"
    controller = observed_pvc.metadata.controller_uid()
    if not controller:
        return f"{what} already exists without a controller owner; it is not adopted by {owner}"
    if controller != suggestion_uid:
        return f"{what} already exists and is controlled by uid {controller}, not by {owner}"
    bound, wanted = observed_pvc.spec.volume_name, plan.claim.volume_name
    if wanted is not None and bound and bound != wanted:
        return f"{what} is bound to PersistentVolume {bound}, not to {wanted}"
    return None


def volume_conflict(
    plan: VolumePlan, observed_pv: PersistentVolume | None, suggestion_uid: str | None
) -> str | None:
    """Why the observed PV of our name is not ours, or ``None`` (also when the plan has no PV)."""
    wanted = plan.volume
    if wanted is None or observed_pv is None:
        return None
    what = f"PersistentVolume {wanted.name}"
    owner = f"Suggestion {plan.claim.owner_key} ({_uid(suggestion_uid)})"
    recorded = observed_pv.owner_uid()
    if not recorded:
        return (
            f"{what} already exists without the {ANNOTATION_OWNER_UID} annotation; "
            f"it is not adopted by {owner}"
        )
    if recorded != suggestion_uid:
        holder = observed_pv.metadata.annotations.get(ANNOTATION_OWNER, "another Suggestion")
        return f"{what} already exists and belongs to {holder} (uid {recorded}), not to {owner}"
    ref, claim = observed_pv.spec.claim_ref, plan.claim
    if ref is not None and (ref.namespace, ref.name) != (claim.namespace, claim.name):
        return (
            f"{what} is claimed by PersistentVolumeClaim {ref.namespace}/{ref.name}, "
            f"not by {claim.namespace}/{claim.name}"
        )
    return None
