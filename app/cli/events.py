"""The embedded cluster's Events as the ``v1 Event`` objects Kubernetes would store for them.

The fake cluster keeps Events as a log (``FakeCluster.events``), not as objects: ``get``,
``describe`` and ``-o name`` show each as an Event named ``<object>.<sequence>`` (its place in
the log, in hex, as the API server's names are unique per object). A name given for events
matches the Event's own name or the name of the object it is about, so ``get events NAME``
lists what happened to NAME, and a name printed by ``-o name`` finds its Event again. Those are
looked up by the names of the objects they can be about (``about``), not by reading every Event.
"""

from __future__ import annotations

import re

from katib_resume.adapters.fake import Event
from katib_resume.core.manifest import Manifest


def event_manifest(event: Event, sequence: int) -> Manifest:
    """A recorded Event as the ``v1 Event`` object Kubernetes would store for it."""
    ref = event.ref
    involved: Manifest = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
    if ref.namespace:
        involved["namespace"] = ref.namespace
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{ref.name}.{sequence:016x}",
            "namespace": ref.namespace or "default",
        },
        "involvedObject": involved,
        "type": event.type,
        "reason": event.reason,
        "message": event.message,
        "source": {"component": "katib-resume"},
        "count": 1,
        "firstTimestamp": event.time,
        "lastTimestamp": event.time,
    }


OWN_NAME = re.compile(r"(.+)\.[0-9a-f]{16}")
"""An Event's own name (``event_manifest``): its object's name, a dot, its place in hex."""


def about(names: tuple[str, ...]) -> frozenset[str]:
    """The names of the objects whose Events ``event_matches`` may keep for ``names``: each
    name (an Event about it), and the object part of each shaped as an Event's own name."""
    own = (found.group(1) for name in names if (found := OWN_NAME.fullmatch(name)))
    return frozenset((*names, *own))


def event_matches(manifest: Manifest, ns: str | None, names: tuple[str, ...]) -> bool:
    """In ``ns`` (``None``: any; kubectl files Events about a cluster-scoped object, a PV,
    under ``default``) and, when names are given, named or about one of them."""
    if ns is not None and manifest["metadata"]["namespace"] != ns:
        return False
    own, about = manifest["metadata"]["name"], manifest["involvedObject"]["name"]
    return not names or own in names or about in names
