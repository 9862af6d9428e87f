"""``katib-resume describe KIND [NAME...]``: what happened to objects, in order, one after another.

A resume is a story told by two sources that Kubernetes keeps apart: the conditions (the state
now, each with the time of its last transition) and the Events (every transition, with its
time). ``describe`` prints the key fields (``describe_fields``), the conditions, then both merged
into one timeline ordered by time, so that "completed, torn down, restarted, restored from the
volume" reads top to bottom. Every kind ``get`` knows can be described, chosen as ``get``
chooses (``KIND NAME``, ``KIND/NAME``, ``KIND -l SELECTOR``, ``KIND`` for all); a name that is
not found is kubectl's NotFound, exit status 1. Read-only, like ``get``.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.cli.describe_fields import Fields, kind_fields
from katib_resume.app.cli.get import select, selector_of
from katib_resume.app.cli.kinds import EVENT, Resource, targets
from katib_resume.app.common.errors import InputError
from katib_resume.app.common.output import age, parse_time, table
from katib_resume.app.embedded.driver import namespace, read_cluster
from katib_resume.core.manifest import Manifest

EXIT_OK, EXIT_NOT_FOUND = 0, 1
Row = tuple[str, str, str, str, str]


def describe(args: argparse.Namespace) -> int:
    chosen, selector = targets(args.targets), selector_of(args.selector)
    if selector and any(target.names for target in chosen):
        raise InputError("a NAME cannot be given with a selector (-l)")
    cluster = read_cluster(args.state_dir)
    ns = namespace(args)
    found = select(cluster, chosen, ns, selector)
    texts = [describe_one(cluster, r, obj) for r, objects in found.groups for obj in objects]
    print("\n".join(texts), end="")
    for error in found.missing:
        print(error, file=sys.stderr)
    if not texts and not found.missing:
        namespaced = any(target.resource.namespaced for target in chosen)
        print(f"No resources found{f' in {ns} namespace' if namespaced else ''}.", file=sys.stderr)
    return EXIT_NOT_FOUND if found.missing else EXIT_OK


def describe_one(cluster: FakeCluster, resource: Resource, obj: Manifest) -> str:
    now = cluster.clock.now()
    lines = [_fields(_common(resource, obj, now) + kind_fields(cluster, resource, obj, now))]
    if resource is not EVENT:
        conditions = (obj.get("status") or {}).get("conditions") or []
        headers = ["TYPE", "STATUS", "REASON", "MESSAGE"]
        cells = [[str(c.get(k.lower(), "")) for k in headers] for c in conditions]
        lines.append(_section("Conditions", headers, cells))
        headers = ["TIME", "AGE", "SOURCE", "WHAT", "MESSAGE"]
        lines.append(_section("Timeline", headers, _timeline(cluster, obj, now)))
    return "".join(lines)


def _common(resource: Resource, obj: Manifest, now: datetime) -> Fields:
    """Name, namespace, labels, owner, UID and age: what kubectl shows first for any kind."""
    meta = obj["metadata"]
    labels = meta.get("labels") or {}
    owners = meta.get("ownerReferences") or []
    created = meta.get("creationTimestamp")
    fields = [("Name", str(meta["name"]))]
    if resource.namespaced:
        fields.append(("Namespace", str(meta.get("namespace", ""))))
    fields.append(("Labels", ",".join(f"{k}={v}" for k, v in labels.items()) or "<none>"))
    if owners:
        fields.append(("Controlled by", ",".join(f"{o['kind']}/{o['name']}" for o in owners)))
    if meta.get("uid"):
        fields.append(("UID", str(meta["uid"])))
    if created:
        fields.append(("Created", f"{created} ({age(created, now)} ago)"))
    return fields


def _fields(fields: Fields) -> str:
    width = max(len(key) for key, _ in fields) + 2
    return "".join(f"{key + ':':<{width}}{value}\n" for key, value in fields)


def _section(title: str, headers: list[str], cells: list[list[str]]) -> str:
    return f"{title}:\n" + (table(headers, cells, indent="  ") if cells else "  <none>\n")


def _timeline(cluster: FakeCluster, obj: Manifest, now: datetime) -> list[list[str]]:
    """Conditions (at their last transition) and Events about ``obj``, ordered by time (the
    Events in the order they were recorded, looked up by the object: ``events_about``)."""
    meta = obj["metadata"]
    entries: list[Row] = [
        (
            str(c.get("lastTransitionTime", "")),
            "condition",
            f"{c.get('type')}={c.get('status')}",
            str(c.get("reason", "")),
            str(c.get("message", "")),
        )
        for c in (obj.get("status") or {}).get("conditions") or []
    ]
    entries += [
        (event.time, f"event {event.type}", event.reason, "", event.message)
        for event in cluster.events_about(obj["kind"], meta.get("namespace"), meta["name"])
    ]
    entries.sort(key=lambda entry: parse_time(entry[0]) or now)
    return [
        [when, age(when, now), source, f"{what} ({reason})" if reason else what, message]
        for when, source, what, reason, message in entries
    ]
