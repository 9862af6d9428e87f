"""The watch window read back from disk, each past event decoded when it is first read.

A cluster opened from its database starts with the watch window it had (``sqlite.WINDOW``
revisions), so that a cursor from before keeps its meaning. Most of those events hold states of
the Suggestion and the Experiment that have since been replaced, and each is as big as the
history: decoding them all would make every start cost what the history holds, while the
runtime's own consumers (the informer lists, then watches from now) never read them. So an
event whose object is no longer current is kept as its stored text and decoded when something
reads it (``since``, ``events``); an event holding an object's current state shares the
store's decoded object, as the in-memory store's events do. What is read is the same in either
case: an ``ObjectRef`` and an object equal to what was written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from katib_resume.adapters.fake.watch import EventKind, WatchEvent, WatchLog
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest

Load = Callable[[], Manifest]
_UNREAD: Manifest = {}
"""The object of an event not decoded yet (never handed out)."""


class StoredWindow(WatchLog):
    """A ``WatchLog`` some of whose (oldest) events are decoded on first read."""

    def __init__(self, events: Iterable[WatchEvent | Unread], base: int) -> None:
        self._loads: dict[int, tuple[WatchEvent, Load]] = {}
        self._decoded: dict[int, WatchEvent] = {}
        kept: list[WatchEvent] = []
        for event in events:
            if isinstance(event, Unread):
                placeholder = WatchEvent(event.type, event.ref, _UNREAD, event.resource_version)
                self._loads[id(placeholder)] = (placeholder, event.load)
                kept.append(placeholder)
            else:
                kept.append(event)
        super().__init__(kept, base)

    def since(self, cursor: int) -> tuple[int, list[WatchEvent]]:
        cursor, events = super().since(cursor)
        return cursor, [self._read(event) for event in events]

    def events(self) -> list[WatchEvent]:
        return [self._read(event) for event in super().events()]

    def _read(self, event: WatchEvent) -> WatchEvent:
        if event.object is not _UNREAD:
            return event
        decoded = self._decoded.get(id(event))
        if decoded is None:
            _, load = self._loads[id(event)]  # the placeholder stays here: its id is not reused
            data = {"type": event.type, "object": load(), "resourceVersion": event.resource_version}
            decoded = self._decoded[id(event)] = WatchEvent.from_dict(data)
        return decoded


@dataclass(frozen=True, slots=True)
class Unread:
    """One stored event before it is decoded: what it is, and how to decode its object."""

    type: EventKind
    ref: ObjectRef
    resource_version: str
    load: Load
