"""The objects a Suggestion owns, as observed: only what the lifecycle needs to decide.

Each is parsed leniently (unknown fields kept) because it comes from the cluster, not the user.
"""

from __future__ import annotations

from typing import Any

from katib_resume.core.katib import ANNOTATION_OWNER_UID
from katib_resume.core.kube import KubeModel
from katib_resume.core.model.meta import ObjectMeta


class TypeStatus(KubeModel):
    type: str
    status: str = "Unknown"


class DeploymentStatus(KubeModel):
    conditions: tuple[TypeStatus, ...] = ()


class Deployment(KubeModel):
    metadata: ObjectMeta
    status: DeploymentStatus = DeploymentStatus()

    def is_available(self) -> bool:
        """Katib's readiness test: an ``Available`` condition with status True, nothing else."""
        return any(c.type == "Available" and c.status == "True" for c in self.status.conditions)


class OwnedObject(KubeModel):
    """A Service, ServiceAccount, Role or RoleBinding: existence and ownership only."""

    metadata: ObjectMeta


class ClaimSpec(KubeModel):
    volume_name: str | None = None
    storage_class_name: str | None = None


class ClaimStatus(KubeModel):
    phase: str | None = None


class PersistentVolumeClaim(KubeModel):
    metadata: ObjectMeta
    spec: ClaimSpec = ClaimSpec()
    status: ClaimStatus = ClaimStatus()

    def is_bound(self) -> bool:
        return self.status.phase == "Bound"


class ClaimRef(KubeModel):
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None


class VolumeSpec(KubeModel):
    claim_ref: ClaimRef | None = None
    host_path: dict[str, Any] | None = None


class PersistentVolume(KubeModel):
    metadata: ObjectMeta
    spec: VolumeSpec = VolumeSpec()

    def owner_uid(self) -> str | None:
        """The Suggestion UID recorded on the PV when we created it (a PV has no owner refs)."""
        return self.metadata.annotations.get(ANNOTATION_OWNER_UID)
