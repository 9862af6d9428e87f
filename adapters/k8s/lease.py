"""Leader election on a ``coordination.k8s.io/v1`` Lease, so several replicas can run safely.

Only the holder of the Lease reconciles. The rules are client-go's: a Lease held by another
identity is taken over only after it has gone ``leaseDurationSeconds`` without a renewal *as
observed by this replica's own monotonic clock* (never by comparing the holder's timestamps
with our wall clock, so clock skew between nodes cannot elect two leaders); every write is a
merge patch guarded by ``resourceVersion``, so two candidates racing for an expired Lease
cannot both win; a leader that could not renew for ``renew_deadline`` seconds stops leading
(and the controller exits, to be restarted as a candidate) before anyone else may take over;
a leader that shuts down releases the Lease so a standby takes over at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from katib_resume.adapters.k8s.patches import guarded
from katib_resume.adapters.k8s.resources import resource
from katib_resume.adapters.k8s.transport import MERGE_PATCH, Transport
from katib_resume.core.manifest import Manifest
from katib_resume.core.objects import version_of
from katib_resume.core.ports import AlreadyExists, ClusterError, Conflict, NotFound

log = logging.getLogger("katib_resume.lease")
LEASES = resource("coordination.k8s.io/v1", "Lease")
LEASE_NAME = "katib-resume-controller"


def _micro_time(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaseElector:
    def __init__(
        self,
        transport: Transport,
        namespace: str,
        identity: str,
        *,
        name: str = LEASE_NAME,
        duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.transport, self.namespace, self.identity, self.name = (
            transport,
            namespace,
            identity,
            name,
        )
        self.duration, self.renew_deadline, self.retry_period = (
            duration,
            renew_deadline,
            retry_period,
        )
        self.monotonic, self.wall = monotonic, wall
        self.observed: tuple[str, str] | None = None
        self.observed_at = 0.0
        self.renewed_at = 0.0
        self.leading = threading.Event()
        self.lost = threading.Event()

    @property
    def path(self) -> str:
        return LEASES.item(self.namespace, self.name)

    def try_acquire_or_renew(self) -> bool:
        """One attempt; whether this replica holds the Lease afterwards."""
        try:
            lease = self.transport.request("GET", self.path)
        except NotFound:
            return self._create()
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        record = (holder, str(spec.get("renewTime") or ""))
        if record != self.observed:
            self.observed, self.observed_at = record, self.monotonic()
        mine = holder == self.identity
        expired = self.monotonic() >= self.observed_at + float(
            spec.get("leaseDurationSeconds") or self.duration
        )
        if holder and not mine and not expired:
            return False
        return self._write(lease, spec, mine)

    def _spec(self, acquire_time: str | None, transitions: int) -> Manifest:
        now = _micro_time(self.wall())
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": round(self.duration),
            "acquireTime": acquire_time or now,
            "renewTime": now,
            "leaseTransitions": transitions,
        }

    def _create(self) -> bool:
        body = {
            "apiVersion": LEASES.api_version,
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": self._spec(None, 0),
        }
        try:
            self.transport.request("POST", LEASES.collection(self.namespace), body=body)
        except (AlreadyExists, Conflict):
            return False
        self.renewed_at = self.monotonic()
        return True

    def _write(self, lease: Manifest, spec: Manifest, mine: bool) -> bool:
        transitions = int(spec.get("leaseTransitions") or 0) + (0 if mine else 1)
        acquired = spec.get("acquireTime") if mine else None
        patch = guarded({"spec": self._spec(acquired, transitions)}, version_of(lease) or None)
        try:
            self.transport.request("PATCH", self.path, body=patch, content_type=MERGE_PATCH)
        except Conflict:
            return False
        self.renewed_at = self.monotonic()
        return True

    def run(self, stop: threading.Event) -> None:
        """Campaign, then renew, until ``stop`` or the Lease is lost (``lost`` is then set)."""
        while not stop.is_set():
            try:
                held = self.try_acquire_or_renew()
            except ClusterError as error:
                log.warning("lease attempt failed", extra={"error": str(error)})
                held = False
            if held and not self.leading.is_set():
                log.info("became leader", extra={"lease": f"{self.namespace}/{self.name}"})
                self.leading.set()
            overdue = self.monotonic() - self.renewed_at > self.renew_deadline
            if self.leading.is_set() and not held and overdue:
                log.error("lost the lease", extra={"lease": f"{self.namespace}/{self.name}"})
                self.leading.clear()
                self.lost.set()
                return
            stop.wait(self.retry_period)

    def release(self) -> None:
        """Give the Lease up (when leading), so that a standby takes over at once."""
        if not self.leading.is_set():
            return
        self.leading.clear()
        try:
            lease = self.transport.request("GET", self.path)
            if (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            now = _micro_time(self.wall())
            spec = {"holderIdentity": None, "leaseDurationSeconds": 1, "renewTime": now}
            body = guarded({"spec": spec}, version_of(lease) or None)
            self.transport.request("PATCH", self.path, body=body, content_type=MERGE_PATCH)
        except ClusterError as error:
            log.warning("lease not released", extra={"error": str(error)})
