"""``katib-resume get``: the embedded cluster's objects, as ``kubectl get`` shows them.

A read-only command: the state file is read without the session (which would lock, write the
katib-config and save), so looking never changes the state directory. What to show is read as
kubectl reads it (``kinds.targets``): ``get pvc,pv``, ``get experiment NAME``,
``get experiment/NAME trial/NAME``, and ``-l SELECTOR`` (``selector``) keeps the objects whose
labels match. ``-o json|yaml|jsonpath=...`` prints the one object when one NAME is asked for and
a ``v1 List`` otherwise, as kubectl does; ``-o name`` prints ``kind.group/name`` lines.

A name that does not exist is kubectl's ``Error from server (NotFound)`` on stderr and exit
status 1, after whatever was found is printed. Events are not stored as objects in the fake
cluster; they are shown as ``v1 Event`` objects named ``<object>.<sequence>``, and
``get events NAME`` lists the Events about the objects named NAME (or the Event of that name).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.cli.events import about, event_manifest, event_matches
from katib_resume.app.cli.kinds import EVENT, Resource, Target, find, targets
from katib_resume.app.cli.printers import print_objects
from katib_resume.app.cli.selector import Selector, SelectorError, matches, parse
from katib_resume.app.common.errors import InputError, NotFoundError, RequestError
from katib_resume.app.embedded.driver import DEFAULT_NAMESPACE, namespace, read_cluster
from katib_resume.core.manifest import Manifest

EXIT_OK, EXIT_NOT_FOUND = 0, 1


@dataclass
class Found:
    """The objects found per kind, in the order asked for, and the names that were not."""

    groups: list[tuple[Resource, list[Manifest]]] = field(default_factory=list)
    missing: list[NotFoundError] = field(default_factory=list)


def get(args: argparse.Namespace) -> int:
    chosen, selector = targets(args.targets), selector_of(args.selector)
    named = any(target.names for target in chosen)
    if selector and named:
        raise InputError("a NAME cannot be given with a selector (-l)")
    if args.all_namespaces and any(t.names and t.resource is not EVENT for t in chosen):
        raise InputError("a resource cannot be retrieved by name across all namespaces (-A)")
    cluster = read_cluster(args.state_dir)
    ns = None if args.all_namespaces else namespace(args)
    found = select(cluster, chosen, ns, selector)
    single = len(chosen) == 1 and len(chosen[0].names) == 1 and chosen[0].resource is not EVENT
    now = cluster.clock.now()
    print_objects(found.groups, args.output, now, ns, single=single, missing=bool(found.missing))
    for error in found.missing:
        print(error, file=sys.stderr)
    return EXIT_NOT_FOUND if found.missing else EXIT_OK


def selector_of(text: str | None) -> Selector:
    """``-l``'s selector; one that does not parse is refused as kubectl refuses it (exit 1)."""
    try:
        return parse(text or "")
    except SelectorError as error:
        raise RequestError(f"unable to parse selector {text!r}: {error}") from None


def select(
    cluster: FakeCluster, chosen: list[Target], ns: str | None, selector: Selector = ()
) -> Found:
    """The objects of every target in ``ns`` (``None``: all) whose labels match."""
    found = Found()
    for target in chosen:
        objects: list[Manifest] = []
        for name in target.names if target.resource is not EVENT else ():
            try:
                objects.append(find(cluster, target.resource, ns or DEFAULT_NAMESPACE, name))
            except NotFoundError as error:
                found.missing.append(error)
        if not target.names or target.resource is EVENT:
            objects = listing(cluster, target.resource, ns, target.names)
        kept = [obj for obj in objects if matches(selector, obj["metadata"].get("labels"))]
        found.groups.append((target.resource, kept))
    return found


def listing(
    cluster: FakeCluster, resource: Resource, ns: str | None, names: tuple[str, ...] = ()
) -> list[Manifest]:
    """Every object of ``resource`` in ``ns`` (``None``: all); for events, those about ``names``."""
    if resource is EVENT:
        placed = cluster.events_named(about(names)) if names else enumerate(cluster.events, 1)
        return [
            manifest
            for index, event in placed
            if event_matches(manifest := event_manifest(event, index), ns, names)
        ]
    scope = ns if resource.namespaced else None
    return list(cluster.list(resource.api_version, resource.kind, scope, {}))
