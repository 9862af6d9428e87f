"""``katib-resume delete KIND NAME...`` (or ``-f FILE``): delete, then wait until it is really gone.

Deleting an Experiment is several controllers' work: the garbage collector removes what owner
references lead to (the Suggestion, the Trials, the Deployment, Service and PVC), our
finalizer on the Suggestion deletes the PV that no owner reference can reach, and the PV
controller reclaims the volume's directory. A ``kubectl delete`` returns before any of that; here
the command runs the runtime until it has happened (or says what did not), because the next
``run -f`` of the same Experiment is refused by admission while its PV still exists.

What belongs to the Experiment is found the way the controller's watch finds it (``keys.key_of``:
labels, owner references, our owner annotation), plus the PVs bound to its claims.

Every other kind ``get`` knows is deleted as kubectl deletes it, waiting (as ``kubectl delete``
waits by default) until no object of that UID is left: finalizers (pvc-protection while a pod
mounts the claim) run first; what a controller then makes again under the same name is a new
object. Events are the exception: here they are the cluster's log, not objects, and are kept.
The objects are chosen as ``get`` chooses them (``KIND NAME...``, ``KIND/NAME...``,
``KIND -l SELECTOR``, or the objects of ``-f FILE``: one object or a ``v1 List``, as
``get -o yaml`` prints); a name that is not found is kubectl's NotFound (exit status 1) and the
others are still deleted.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from katib_resume.adapters.fake.node import host_dir
from katib_resume.app.cli.get import select, selector_of
from katib_resume.app.cli.kinds import EVENT, EXPERIMENT, PV, PVC, Resource, find, targets
from katib_resume.app.cli.manifest_targets import Chosen, file_targets, named_targets
from katib_resume.app.common.errors import InputError, NotFoundError
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.driver import (
    namespace,
    options,
    read_cluster,
    require_state,
    settle,
)
from katib_resume.app.embedded.runtime import Runtime
from katib_resume.app.loop.keys import Key, key_of
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Cluster, NotFound
from katib_resume.core.resources import CONTROLLED_KINDS

EXIT_OK, EXIT_NOT_FOUND = 0, 1
ORDER = tuple(kind for _, kind in CONTROLLED_KINDS)


@dataclass
class Removal:
    """What the deletion took away: objects by kind, and the volume directories."""

    objects: dict[str, list[str]] = field(default_factory=dict)
    directories: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)

    def lines(self) -> list[str]:
        kinds = sorted(self.objects, key=lambda k: ORDER.index(k) if k in ORDER else len(ORDER))
        lines = []
        for kind in kinds:
            names = sorted(self.objects[kind])
            if len(names) > 3:
                lines.append(f"  removed {len(names)} {kind}s")
            else:
                lines += [f"  removed {kind} {name}" for name in names]
        lines += [f"  removed volume directory {path}" for path in self.directories]
        lines += [
            f"  kept volume directory {path}: no volume plugin removed its data "
            "(a Retain policy, or a static hostPath outside /tmp/, as in Kubernetes)"
            for path in self.kept
        ]
        return lines


def delete(args: argparse.Namespace) -> int:
    chosen = _chosen(args)
    if any(resource is EVENT for resource, _, _ in chosen):
        raise InputError("events cannot be deleted here: they are the embedded cluster's log")
    if not chosen:
        print("No resources found", file=sys.stderr)
        return EXIT_OK
    first = chosen[0]
    require_state(args.state_dir, f'{first[0].qualified} "{first[2]}"')
    missing: list[NotFoundError] = []
    with session(options(args, *_reached(args.state_dir, chosen))) as runtime:
        for resource, where, name in chosen:
            try:
                print("\n".join(delete_one(runtime, resource, where, name)))
            except NotFoundError as error:
                missing.append(error)
    for problem in missing:
        print(problem, file=sys.stderr)
    return EXIT_NOT_FOUND if missing else EXIT_OK


def _reached(state_dir: Path, chosen: Chosen) -> list[tuple[str, str]]:
    """The Experiments a deletion reaches (the ones named, and those the other objects belong
    to): only these are advanced while it waits, so an endless Experiment beside them never
    holds it up. An object that belongs to none reaches nothing."""
    cluster, reached = read_cluster(state_dir), []
    for resource, ns, name in chosen:
        if resource is EXPERIMENT:
            reached.append((ns, name))
            continue
        try:
            key = key_of(find(cluster, resource, ns, name))
        except NotFoundError:
            continue
        if key is not None:
            reached.append((key.namespace, key.name))
    return reached


def _chosen(args: argparse.Namespace) -> Chosen:
    """The objects named, described by ``-f FILE``, or matching ``-l`` (read before the session:
    a selector that matches nothing leaves the state directory as it is)."""
    ns = namespace(args)
    if args.filename:
        if args.selector is not None:
            raise InputError("-l does nothing with -f: the file names the objects")
        return file_targets(args.filename, args.namespace)
    if args.selector is None:
        return named_targets(args.targets, ns)
    chosen, selector = targets(args.targets), selector_of(args.selector)
    if any(target.names for target in chosen):
        raise InputError("a NAME cannot be given with a selector (-l)")
    found = select(read_cluster(args.state_dir), chosen, ns, selector)
    return [
        (resource, str(obj["metadata"].get("namespace") or ns), str(obj["metadata"]["name"]))
        for resource, objects in found.groups
        for obj in objects
    ]


def delete_one(runtime: Runtime, resource: Resource, ns: str, name: str) -> list[str]:
    """Delete one object and wait until it is gone; the lines that say what went."""
    deleted = f'{resource.name_of(name).partition("/")[0]} "{name}" deleted'
    if resource is EXPERIMENT:
        return [deleted, *delete_experiment(runtime, ns, name).lines()]
    cluster = runtime.cluster
    obj = find(cluster, resource, ns, name)
    ref, uid = ObjectRef.of(obj), obj["metadata"]["uid"]
    cluster.delete(ref, uid)

    def gone() -> bool:
        try:
            return bool(cluster.get(ref)["metadata"].get("uid") != uid)
        except NotFound:
            return True

    settle(runtime, gone, f"{ref} to be deleted", status=lambda: _holding(cluster, ref))
    return [deleted]


def _holding(cluster: Cluster, ref: ObjectRef) -> str:
    """What keeps a deleted object: its finalizers (``kubernetes.io/pv-protection`` while a
    claim is bound to the PV, ``kubernetes.io/pvc-protection`` while a pod mounts the claim)."""
    try:
        finalizers = cluster.get(ref)["metadata"].get("finalizers") or []
    except NotFound:
        return "gone"
    return f"terminating, held by the finalizers {', '.join(finalizers) or '(none)'}"


def delete_experiment(runtime: Runtime, ns: str, name: str) -> Removal:
    """Delete with a UID precondition and run the runtime until everything of it is gone."""
    cluster = runtime.cluster
    experiment = find(cluster, EXPERIMENT, ns, name)
    belongs = _belonging(runtime, ns, name)
    directories = [path for pv in belongs if (path := _directory(runtime, pv)) is not None]
    refs = [ObjectRef.of(obj) for obj in belongs]
    cluster.delete(ObjectRef.of(experiment), experiment["metadata"]["uid"])
    settle(runtime, lambda: not any(map(cluster.store.find, refs)), f"{ns}/{name} to be deleted")
    removal = Removal()
    for obj in belongs:
        removal.objects.setdefault(obj["kind"], []).append(obj["metadata"]["name"])
    for path in directories:
        (removal.kept if path.exists() else removal.directories).append(path)
    return removal


def _belonging(runtime: Runtime, ns: str, name: str) -> list[Manifest]:
    """Every object the controller would reconcile under this Experiment, and its claims' PVs."""
    key = Key(ns, name)
    objects = [obj for obj in runtime.cluster.store.all() if key_of(obj) == key]
    claims = {obj["metadata"]["name"] for obj in objects if obj["kind"] == PVC.kind}
    names = {obj["metadata"]["name"] for obj in objects if obj["kind"] == PV.kind}
    for pv in runtime.cluster.list(PV.api_version, PV.kind, None, {}):
        ref = (pv.get("spec") or {}).get("claimRef") or {}
        bound = ref.get("namespace") == ns and ref.get("name") in claims
        if bound and pv["metadata"]["name"] not in names:
            objects.append(pv)
    return objects


def _directory(runtime: Runtime, obj: Manifest) -> Path | None:
    if obj["kind"] != PV.kind:
        return None
    path = host_dir(runtime.world.volume_root, obj)
    return path if path is not None and path.exists() else None
