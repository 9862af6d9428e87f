"""``katib-resume get``: the embedded cluster's objects, as ``kubectl get`` shows them.

A read-only command: the state file is read without the session (which would lock, write the
katib-config and save), so looking never changes the state directory. ``-o json|yaml`` prints
the one object when a NAME is given and a ``v1 List`` otherwise, as kubectl does. Events are not
stored as objects in the fake cluster; they are shown as ``v1 Event`` objects named
``<object>.<sequence>``, and ``get events NAME`` lists the Events about the objects named NAME.
"""

from __future__ import annotations

import argparse
import sys

from katib_resume.adapters.fake import Event, FakeCluster
from katib_resume.app.cli.kinds import EVENT, Resource, find, resolve
from katib_resume.app.cli.tables import rows
from katib_resume.app.common.inputs import InputError
from katib_resume.app.common.output import as_list, render, table
from katib_resume.app.embedded.driver import DEFAULT_NAMESPACE, namespace, read_cluster
from katib_resume.core.kube import Manifest

EXIT_OK = 0


def get(args: argparse.Namespace) -> int:
    resource = resolve(args.kind)
    if args.all_namespaces and args.name and resource is not EVENT:
        raise InputError("a resource cannot be retrieved by name across all namespaces (-A)")
    cluster = read_cluster(args.state_dir)
    ns = None if args.all_namespaces else namespace(args)
    if args.name and resource is not EVENT and args.output in ("json", "yaml"):
        one = find(cluster, resource, namespace(args), args.name)
        sys.stdout.write(render(one, args.output))
        return EXIT_OK
    objects = listing(cluster, resource, ns, args.name)
    if args.output in ("json", "yaml"):
        sys.stdout.write(render(as_list(objects), args.output))
    elif not objects:
        where = "" if ns is None or not resource.namespaced else f" in {ns} namespace"
        print(f"No resources found{where}.", file=sys.stderr)
    else:
        now, wide = cluster.clock.now(), args.output == "wide"
        headers, cells = rows(resource, objects, now, wide=wide, namespaces=ns is None)
        sys.stdout.write(table(headers, cells))
    return EXIT_OK


def listing(
    cluster: FakeCluster, resource: Resource, ns: str | None, name: str | None
) -> list[Manifest]:
    """The objects of ``resource`` in ``ns`` (``None``: all), only NAME's when given."""
    if resource is EVENT:
        return [
            event_manifest(event, index)
            for index, event in enumerate(cluster.events, start=1)
            if _in_namespace(event, ns) and (name is None or event.ref.name == name)
        ]
    if name is not None:
        return [find(cluster, resource, ns or DEFAULT_NAMESPACE, name)]
    scope = ns if resource.namespaced else None
    return list(cluster.list(resource.api_version, resource.kind, scope, {}))


def _in_namespace(event: Event, ns: str | None) -> bool:
    """kubectl files Events about cluster-scoped objects (a PV) under ``default``."""
    return ns is None or (event.ref.namespace or "default") == ns


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
