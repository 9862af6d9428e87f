"""List, then watch from the list's ``resourceVersion``: one kind kept current in the store.

The loop is the informer's reflector: a list replaces the kind's contents in the store (and
logs what changed since the last one); a watch from the list's version then streams every
change, bookmarks included, so a resumed watch starts where the last one stopped. ``410 Gone``
(as an HTTP answer or an ERROR event) means the version is too old: list again. A dropped
connection or a timeout resumes the watch from the last version seen, after a jittered pause.

With ``relist_seconds`` the kind is also listed again on that period, the watch running or not
(the watch is asked to end then): a watch that lost an event without an error would otherwise
leave the cache wrong for good, and a resync of the cache cannot see it. The list replaces
nothing that did not change (``Store.replace`` compares ``resourceVersion``), so only what a
watch missed reaches the change log and the reconcile queue.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time

from katib_resume.adapters.k8s.resources import Resource
from katib_resume.adapters.k8s.store import Store
from katib_resume.adapters.k8s.transport import Transport
from katib_resume.core.manifest import Manifest
from katib_resume.core.objects import version_of
from katib_resume.core.ports import ClusterError, Gone

log = logging.getLogger("katib_resume.watch")
SERVER_TIMEOUT = 300
"""Seconds after which the server ends a watch (the client then resumes it)."""


class KindWatch:
    def __init__(
        self,
        transport: Transport,
        store: Store,
        resource: Resource,
        namespace: str | None,
        stop: threading.Event,
        *,
        server_timeout: int = SERVER_TIMEOUT,
        read_timeout: float | None = None,
        pause: float = 1.0,
        relist_seconds: float | None = None,
    ) -> None:
        self.transport, self.store, self.resource = transport, store, resource
        self.namespace = namespace if resource.namespaced else None
        self.stop, self.server_timeout, self.pause = stop, server_timeout, pause
        self.read_timeout = read_timeout or server_timeout + 15.0
        """A watch silent for this long is dead (a dropped connection): resume it."""
        self.relist_seconds = relist_seconds
        """How often the kind is listed again even though the watch runs (``None``: only
        after ``410 Gone``)."""
        self.relist_at = 0.0
        """When the next periodic relist is due (``time.monotonic``)."""
        self.synced = threading.Event()
        self.version = ""
        self.relists = 0
        self.thread = threading.Thread(
            target=self.run, name=f"watch-{resource.plural}", daemon=True
        )

    def start(self) -> KindWatch:
        self.thread.start()
        return self

    def run(self) -> None:
        needs_list = True
        while not self.stop.is_set():
            try:
                if needs_list or self._relist_due():
                    self.relist()
                    needs_list = False
                self.watch()
            except Gone:
                needs_list = True
            except ClusterError as error:
                if self.stop.is_set():
                    return  # closing: the interrupted stream is ours
                log.warning(
                    "watch interrupted", extra={"kind": self.resource.kind, "error": str(error)}
                )
                self.stop.wait(random.uniform(0.5, 1.0) * self.pause)

    def relist(self) -> None:
        answer = self.transport.request("GET", self.resource.collection(self.namespace))
        items = [self.resource.typed(item) for item in answer.get("items") or ()]
        version = version_of(answer)
        kind = self.resource
        self.store.replace(kind.api_version, kind.kind, self.namespace, items, version)
        self.version = version
        self.relists += 1
        if self.relist_seconds is not None:
            self.relist_at = time.monotonic() + self.relist_seconds
        self.synced.set()

    def _relist_due(self) -> bool:
        return self.relist_seconds is not None and time.monotonic() >= self.relist_at

    def watch(self) -> None:
        timeout = self.server_timeout
        if self.relist_seconds is not None:  # the watch ends when the next relist is due
            timeout = max(1, min(timeout, math.ceil(self.relist_at - time.monotonic())))
        query = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(timeout)),
        ]
        if self.version:
            query.append(("resourceVersion", self.version))
        path = self.resource.collection(self.namespace)
        for event in self.transport.stream(path, query, self.read_timeout):
            if self.stop.is_set() or self._relist_due():
                return
            self._apply(event)

    def _apply(self, event: Manifest) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise Gone(str(obj.get("message") or "watch expired"))
            raise ClusterError(f"watch error: {obj.get('message') or obj}")
        version = version_of(obj)
        if version:
            self.version = version
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            self.store.observe(kind, self.resource.typed(obj))
