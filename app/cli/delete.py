"""``katib-resume delete experiment NAME``: delete, then wait until all of it is really gone.

Deleting an Experiment is several controllers' work: the garbage collector removes what owner
references lead to (the Suggestion, the Trials, the Deployment, Service and PVC), our
finalizer on the Suggestion deletes the PV that no owner reference can reach, and the PV
controller reclaims the volume's directory. A ``kubectl delete`` returns before any of that; here
the command runs the runtime until it has happened (or says what did not), because the next
``run -f`` of the same Experiment is refused by admission while its PV still exists.

What belongs to the Experiment is found the way the controller's watch finds it (``keys.key_of``:
labels, owner references, our owner annotation), plus the PVs bound to its claims.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from katib_resume.adapters.fake.node import host_dir
from katib_resume.app.cli.kinds import EXPERIMENT, PV, PVC, find
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.driver import namespace, options, require_state, settle
from katib_resume.app.embedded.runtime import Runtime
from katib_resume.app.loop.keys import Key, key_of
from katib_resume.core.actions import ObjectRef
from katib_resume.core.kube import Manifest
from katib_resume.core.resources import CONTROLLED_KINDS

EXIT_OK = 0
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
    require_state(args.state_dir, f'experiment "{args.name}"')
    with session(options(args)) as runtime:
        removal = delete_experiment(runtime, namespace(args), args.name)
    print(f'experiment.kubeflow.org "{args.name}" deleted')
    print("\n".join(removal.lines()))
    return EXIT_OK


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
