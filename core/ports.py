"""The ports through which the shell reaches the world, and the world's errors.

Ports are narrow ``Protocol``s: the cluster as a handful of object operations (not a client's
hundred methods), a clock, a config source and the suggestion service's validation call. The
in-memory fake (``adapters.fake``) and the Kubernetes adapter (``adapters.k8s``) implement the
same protocols; only the Kubernetes adapter translates ``ApiException`` codes into the errors
below. The core itself never calls a port: it decides from an ``Observed`` snapshot and the
shell acts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from katib_resume.core.actions import EventType, ObjectRef
from katib_resume.core.manifest import Manifest

if TYPE_CHECKING:
    from katib_resume.core.config import KatibConfig
    from katib_resume.core.model import Suggestion
    from katib_resume.core.observed import Assignments, Validation


class ClusterError(Exception):
    """A world error: the loop turns these into retries with backoff, never a crash."""


class Conflict(ClusterError):
    """A write lost an optimistic-concurrency race (stale ``resourceVersion`` or UID)."""


class NotFound(ClusterError):
    """The object does not exist."""


class AlreadyExists(ClusterError):
    """A create found an object of that name."""


class Invalid(ClusterError):
    """422 Unprocessable Entity: the request breaks an API rule (e.g. a finalizer added late)."""


class TooLarge(Invalid):
    """The server refuses to store the object: it is larger than its store keeps (413, or etcd's
    "request is too large", 1.5 MiB by default). Retrying cannot help while the object grows."""


class Unavailable(ClusterError):
    """The server could not answer now (5xx, timeout, throttling); try again later.

    ``retry_after`` is the server's own ``Retry-After`` (seconds) when it gave one: the loop
    waits at least that long, so throttling is obeyed rather than hammered.
    """

    retry_after: float | None = None


class Gone(ClusterError):
    """A watch's ``resourceVersion`` is too old: list again."""


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware (UTC)."""
        ...


class ConfigSource(Protocol):
    def katib_config(self) -> KatibConfig:
        """The current katib-config; raises ``core.config.ConfigError`` when it is unusable."""
        ...


class SuggestionService(Protocol):
    def validate(self, suggestion: Suggestion) -> Validation:
        """``ValidateAlgorithmSettings`` (and early stopping) against the running service."""
        ...

    def get_suggestions(self, suggestion: Suggestion, count: int) -> Assignments:
        """``GetSuggestions``: ``count`` assignments beyond ``suggestion.status.suggestions``,
        and the algorithm settings the service returned with them.

        Raises ``Unavailable`` when the service cannot answer now.
        """
        ...


class Cluster(Protocol):
    def get(self, ref: ObjectRef) -> Manifest:
        """The object, or ``NotFound``."""
        ...

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        """Objects of a kind in one namespace (``None``: cluster-wide) matching ``labels``."""
        ...

    def create(self, manifest: Manifest) -> Manifest:
        """The created object, or ``AlreadyExists``."""
        ...

    def update(self, manifest: Manifest) -> Manifest:
        """Replace metadata and spec (not status); ``Conflict`` on a stale ``resourceVersion``."""
        ...

    def update_spec(self, ref: ObjectRef, spec: Manifest, resource_version: str | None) -> Manifest:
        """Replace ``spec``; ``Conflict`` on a stale ``resourceVersion``."""
        ...

    def delete(self, ref: ObjectRef, uid: str) -> None:
        """Delete if the UID still matches (``Conflict`` otherwise, ``NotFound`` if gone)."""
        ...

    def update_status(
        self, ref: ObjectRef, status: Manifest, resource_version: str | None
    ) -> Manifest:
        """Replace the status subresource; ``Conflict`` on a stale ``resourceVersion``."""
        ...

    def set_finalizers(
        self, ref: ObjectRef, finalizers: Sequence[str], resource_version: str | None
    ) -> Manifest:
        """Replace ``metadata.finalizers``; ``Conflict`` on a stale ``resourceVersion``."""
        ...

    def record_event(self, ref: ObjectRef, type_: EventType, reason: str, message: str) -> None:
        """Record a Kubernetes-style Event about ``ref``."""
        ...
