"""A cluster port that hands every call to another one: tests override only the calls they
watch or break (an unreachable kind, queued faults), so each wrapper says just that."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from katib_resume.core.actions import EventType, ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Cluster


class DelegatingCluster:
    """Implements ``core.ports.Cluster`` (and nothing more) by calling ``inner``."""

    def __init__(self, inner: Cluster) -> None:
        self.inner = inner

    def get(self, ref: ObjectRef) -> Manifest:
        return self.inner.get(ref)

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        return self.inner.list(api_version, kind, namespace, labels)

    def create(self, manifest: Manifest) -> Manifest:
        return self.inner.create(manifest)

    def update(self, manifest: Manifest) -> Manifest:
        return self.inner.update(manifest)

    def update_spec(self, ref: ObjectRef, spec: Manifest, resource_version: str | None) -> Manifest:
        return self.inner.update_spec(ref, spec, resource_version)

    def delete(self, ref: ObjectRef, uid: str) -> None:
        self.inner.delete(ref, uid)

    def update_status(
        self, ref: ObjectRef, status: Manifest, resource_version: str | None
    ) -> Manifest:
        return self.inner.update_status(ref, status, resource_version)

    def set_finalizers(
        self, ref: ObjectRef, finalizers: Sequence[str], resource_version: str | None
    ) -> Manifest:
        return self.inner.set_finalizers(ref, finalizers, resource_version)

    def record_event(self, ref: ObjectRef, type_: EventType, reason: str, message: str) -> None:
        self.inner.record_event(ref, type_, reason, message)
