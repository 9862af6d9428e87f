"""Object metadata and owner references (the parts of ``metav1.ObjectMeta`` the lifecycle reads)."""

from __future__ import annotations

from pydantic import Field

from katib_resume.core.kube import KubeModel, KubeTime


class OwnerReference(KubeModel):
    api_version: str
    kind: str
    name: str
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(KubeModel):
    name: str
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: KubeTime | None = None
    deletion_timestamp: KubeTime | None = None
    labels: dict[str, str] = Field(default_factory=dict)  # no deep copy of a default
    annotations: dict[str, str] = Field(default_factory=dict)
    finalizers: tuple[str, ...] = ()
    owner_references: tuple[OwnerReference, ...] = ()

    @property
    def is_deleting(self) -> bool:
        """An object with a ``deletionTimestamp`` is on its way out and is never the live one."""
        return self.deletion_timestamp is not None

    def controller_uid(self) -> str | None:
        """UID of the controlling owner, if any."""
        for ref in self.owner_references:
            if ref.controller:
                return ref.uid
        return None
