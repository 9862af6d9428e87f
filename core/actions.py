"""What a plan asks the shell to do: small frozen values, applied in order.

The planner only *describes* writes; the shell (the reconcile loop in ``app``) performs them
against the cluster port. Every write names the object it touches by ``ObjectRef`` and carries
the preconditions that make it safe to retry (the ``resourceVersion`` seen, the UID to delete).
When a plan writes one object twice (a finalizer, then its status), the shell gives the second
write the ``resourceVersion`` that its own first write returned: anyone else's write in between
would already have failed the first one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from katib_resume.core.manifest import Manifest

EventType = Literal["Normal", "Warning"]


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """Which object: ``namespace`` is ``None`` for cluster-scoped kinds (PersistentVolume)."""

    api_version: str
    kind: str
    namespace: str | None
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    @classmethod
    def of(cls, manifest: Manifest) -> ObjectRef:
        meta = manifest["metadata"]
        return cls(manifest["apiVersion"], manifest["kind"], meta.get("namespace"), meta["name"])


@dataclass(frozen=True, slots=True)
class Create:
    manifest: Manifest

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef.of(self.manifest)


@dataclass(frozen=True, slots=True)
class Delete:
    """Delete with a UID precondition, so that a newer object of the same name survives."""

    ref: ObjectRef
    uid: str


@dataclass(frozen=True, slots=True)
class AddFinalizer:
    """Add ``finalizer`` to the ``present`` ones (a full-list write guarded by the version)."""

    ref: ObjectRef
    finalizer: str
    present: tuple[str, ...]
    resource_version: str | None

    @property
    def finalizers(self) -> tuple[str, ...]:
        return (*self.present, self.finalizer)


@dataclass(frozen=True, slots=True)
class RemoveFinalizer:
    ref: ObjectRef
    finalizer: str
    present: tuple[str, ...]
    resource_version: str | None

    @property
    def finalizers(self) -> tuple[str, ...]:
        return tuple(f for f in self.present if f != self.finalizer)


@dataclass(frozen=True, slots=True)
class UpdateStatus:
    """Replace the status subresource; ``resource_version`` turns a lost race into a Conflict."""

    ref: ObjectRef
    status: Manifest
    resource_version: str | None


@dataclass(frozen=True, slots=True)
class UpdateSpec:
    """Replace ``spec`` (the Suggestion's ``requests``); guarded by ``resource_version``."""

    ref: ObjectRef
    spec: Manifest
    resource_version: str | None


@dataclass(frozen=True, slots=True)
class RecordEvent:
    """A Kubernetes-style Event about ``ref`` (transitions are always recorded)."""

    ref: ObjectRef
    type: EventType
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Requeue:
    """Look again after ``after_seconds`` even if nothing changes (waiting on the world)."""

    after_seconds: float
    reason: str


Action = (
    Create
    | Delete
    | AddFinalizer
    | RemoveFinalizer
    | UpdateSpec
    | UpdateStatus
    | RecordEvent
    | Requeue
)
WRITES = (Create, Delete, AddFinalizer, RemoveFinalizer, UpdateSpec, UpdateStatus)


def writes(plan: tuple[Action, ...]) -> tuple[Action, ...]:
    """The actions of ``plan`` that change the cluster (events and requeues excluded)."""
    return tuple(action for action in plan if isinstance(action, WRITES))
