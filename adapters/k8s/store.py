"""The watch-fed cache: every object the controller reads, and the ordered log of changes.

Watches (one thread per kind, ``adapters.k8s.watch``) put what they see here; the controller
reads from here, so a steady-state reconcile makes no API call, and turns the log into
reconcile keys. Every watch event enters the log, even one the cache already reflects (our own
write's echo), because the log is what wakes reconciles up; the cache itself never goes back
to an older version than it holds, so an echo arriving after a newer write answer is harmless.

The log is bounded: a reader whose cursor fell off its start gets ``Gone`` and lists again
(from this cache, not the API server), as an informer's consumer would. The cache itself is
listed again from the API server by its watches (``replace``): after a ``410 Gone`` and every
``relist_seconds``, the repair of an event a watch lost without saying so.

A write's answer and the watch run on different threads, so the answer to the write that
removed an object's last finalizer can arrive *after* the watch reported the object deleted;
remembering it then would bring a dead object back into the cache for good (no event would ever
remove it again). The store therefore keeps the UIDs of the objects it saw deleted and never
remembers them again: a UID is never reused, a new object of the same name has a new one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from katib_resume.core.manifest import Manifest
from katib_resume.core.objects import Cursor, Delta, Key, Objects, key_of, older, version_of
from katib_resume.core.ports import Gone

ChangeType = Literal["ADDED", "MODIFIED", "DELETED"]
LOG_LIMIT = 50_000
TOMBSTONES = 10_000


@dataclass(frozen=True, slots=True)
class Change:
    type: ChangeType
    object: Manifest


class Store:
    def __init__(self, log_limit: int = LOG_LIMIT) -> None:
        self.lock = threading.Lock()
        self.objects = Objects()
        """By kind, then by (namespace, name): the structure ``app.loop.informer.Informer``
        keeps the embedded runtime's objects in (``core.objects``)."""
        self.log: list[Change] = []
        self.first = 0
        """The sequence number of ``log[0]``."""
        self.log_limit = log_limit
        self.tombstones: dict[str, None] = {}
        """UIDs seen deleted, oldest first (a bounded, ordered set)."""

    @property
    def cursor(self) -> int:
        with self.lock:
            return self.first + len(self.log)

    def changes_since(self, cursor: int) -> tuple[int, Sequence[Change]]:
        with self.lock:
            if cursor < self.first:
                raise Gone(f"changes before {self.first} were dropped; list again")
            end = self.first + len(self.log)
            return end, self.log[cursor - self.first :]

    def get(self, key: Key) -> Manifest | None:
        with self.lock:
            return self.objects.get(*key)

    def select(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> list[Manifest]:
        with self.lock:
            return self.objects.select(api_version, kind, namespace, labels)

    def changes(
        self,
        api_version: str,
        kind: str,
        field: str,
        value: str,
        since: Cursor | None,
        *,
        blocks: bool = False,
    ) -> Delta:
        """What changed in one index bucket since ``since`` (``core.objects.Objects.changes``;
        this cache is handed no block, so ``blocks`` changes no answer)."""
        with self.lock:
            return self.objects.changes(api_version, kind, field, value, since, blocks=blocks)

    def remember(self, obj: Manifest) -> None:
        """A write's answer: the newest version we know, logged as the write's own echo.

        The watch's echo is what wakes the write's owners up; were it lost, the cache, already
        holding the answer, would give a relist nothing to repair. So the answer is logged
        now, and the watch's echo of the same version, arriving later, is not logged again
        (``observe``): one wake-up per write either way."""
        with self.lock:
            if _uid(obj) in self.tombstones:  # the watch already saw it deleted
                return
            if self.objects.keep(obj):
                self._append(Change("MODIFIED", obj))

    def observe(self, type_: ChangeType, obj: Manifest) -> None:
        """A watch event: apply it and log it, unless the cache holds this version already
        (the echo of our own write, logged by ``remember``) or a newer one."""
        with self.lock:
            if type_ == "DELETED":
                self.objects.discard(obj)
                self._bury(obj)
            elif not self.objects.keep(obj):
                return
            self._append(Change(type_, obj))

    def replace(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        items: Iterable[Manifest],
        version: str = "",
    ) -> None:
        """A fresh list of one kind, current at ``version`` (the list's ``resourceVersion``):
        log what appeared, changed and vanished since the cache last knew it (the changes a
        broken watch may have missed), and nothing else.

        Objects are compared by ``resourceVersion`` (their content only when they carry none),
        so a relist costs a look-up per object and wakes up only what changed. An object the
        cache holds in a newer version than the list's (a write's answer that arrived after the
        list was served) is kept, and so is one absent from the list but newer than it."""
        fresh = {key_of(obj)[2:]: obj for obj in items}
        with self.lock:
            of_kind = self.objects.table(api_version, kind)
            stale = [name for name in of_kind if namespace is None or name[0] == namespace]
            for name in stale:
                if name not in fresh and not older(version, version_of(of_kind[name])):
                    gone = self.objects.pop(api_version, kind, name)
                    assert gone is not None  # listed just above, under the lock
                    self._bury(gone)
                    self._append(Change("DELETED", gone))
            for name, obj in fresh.items():
                held = of_kind.get(name)
                if held is not None and not _differs(held, obj):
                    continue
                if _uid(obj) in self.tombstones:
                    continue  # the watch saw it deleted after this list was served
                self.objects.put(obj)
                self._append(Change("ADDED" if held is None else "MODIFIED", obj))

    def forget(self, obj: Manifest) -> None:
        """The API server says ``obj`` is gone (a write to it was answered 404): drop it and
        log its deletion, as the watch would have if it had not missed it."""
        with self.lock:
            gone = self.objects.discard(obj)
            if gone is not None:
                self._bury(gone)
                self._append(Change("DELETED", gone))

    def _bury(self, obj: Manifest) -> None:
        uid = _uid(obj)
        if uid:
            self.tombstones[uid] = None
            if len(self.tombstones) > TOMBSTONES:
                del self.tombstones[next(iter(self.tombstones))]

    def _append(self, change: Change) -> None:
        self.log.append(change)
        if len(self.log) > self.log_limit:
            drop = len(self.log) - self.log_limit // 2
            del self.log[:drop]
            self.first += drop


def _uid(obj: Manifest) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _differs(held: Manifest, listed: Manifest) -> bool:
    """Whether a listed object replaces the held one: a new version, unless the cache knows a
    newer one; by content when versions are missing."""
    at, now = version_of(held), version_of(listed)
    if at and now:
        return at != now and not older(now, at)
    return held != listed
