"""``katib-resume demo``: Katib's from-volume example, run, completed, resumed and deleted.

The demo is the README's promise made checkable. It runs the shipped example
(``app/data/from-volume-resume.yaml``, package data, so it works from an installed wheel) in a
temporary state directory, one session per stage as separate commands would, through the same
functions the commands use (admission, defaulting, the runtime, the edit, the delete). Every
sentence it prints is a claim followed by its evidence read off the cluster, and every claim is
checked before it is printed: if one is false the demo stops with that claim and exit status 3,
so the demo cannot tell a story the code no longer lives up to.

It tells the seed design's story (``docs/local-volumes.md``): the embedded runtime's default
katib-config is in the local volume mode, so the first run creates the PVC *and* a local hostPath
PV pre-bound to it, the directory outlives the service through completion, the resumed service
mounts that same directory, and deleting the Experiment removes the PV and the directory.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

from katib_resume.adapters.fake.node import host_dir, host_path
from katib_resume.app.cli.delete import delete_experiment
from katib_resume.app.cli.edit import apply_edit
from katib_resume.app.cli.kinds import EXPERIMENT, PV, PVC, SUGGESTION
from katib_resume.app.cli.restart import Children, children, restart_report, wait_until_running
from katib_resume.app.cli.run import create, run_to_completion
from katib_resume.app.common.inputs import load_experiment
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.driver import condition_text, last_condition
from katib_resume.app.embedded.options import Options
from katib_resume.app.embedded.runtime import Runtime
from katib_resume.core.denied import Denied
from katib_resume.core.katib import (
    DEFAULT_LOCAL_VOLUME_PATH_PREFIX,
    DEFAULT_SUGGESTION_STORAGE_CLASS,
)
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment
from katib_resume.core.names import pv_name
from katib_resume.core.volumes import per_volume_path

EXIT_OK, EXIT_CLAIM_FALSE = 0, 3
EXAMPLE = "from-volume-resume.yaml"
SEED = 1
FIRST, RAISED, TOO_LOW = 12, 20, 10
Assignments = list[tuple[tuple[str, str], ...]]


class ClaimFalse(Exception):
    """A sentence the demo was about to print does not hold."""


def check(holds: bool, claim: str) -> None:
    if not holds:
        raise ClaimFalse(claim)


def say(text: str, *evidence: str) -> None:
    print(text)
    for line in evidence:
        print(f"     {line}")


def demo(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="katib-resume-demo-") as scratch:
            Story(Path(scratch), example()).tell()
    except ClaimFalse as false:
        print(f"katib-resume: demo: this claim turned out false: {false}", file=sys.stderr)
        return EXIT_CLAIM_FALSE
    print(f"Demo done in {time.perf_counter() - started:.1f} s; every claim above was checked.")
    return EXIT_OK


def example() -> Experiment:
    with resources.as_file(resources.files("katib_resume.app").joinpath("data", EXAMPLE)) as path:
        return load_experiment(str(path))


class Story:
    """The stages, each in its own session over one state directory, as commands would run."""

    def __init__(self, scratch: Path, experiment: Experiment) -> None:
        self.scratch, self.experiment = scratch, experiment
        self.options = Options(scratch / "resumed", seed=SEED)
        self.ns, self.name = experiment.namespace, experiment.metadata.name
        self.first: Assignments = []
        self.pvc: tuple[str, str] = ("", "")
        self.directory = Path()

    def tell(self) -> None:
        print(f"Katib's {self.name} example, on the embedded cluster in {self.scratch}:")
        self.first_run()
        self.completion()
        self.raise_budget()
        resumed = self.resume()
        self.same_as_uninterrupted(resumed)
        self.deletion()

    def first_run(self) -> None:
        with session(self.options) as runtime:
            create(runtime, self.experiment, None, SEED)
            steps = run_to_completion(runtime, EXPERIMENT.ref(self.ns, self.name))
            experiment = runtime.cluster.get(EXPERIMENT.ref(self.ns, self.name))
            self.first = assignments(runtime, self.ns, self.name)
            volume = self.local_volume(runtime)
        trials = experiment["status"].get("trials")
        check(trials == FIRST, f"the first run made {FIRST} trials (it made {trials})")
        check(_reason(experiment) == "ExperimentMaxTrialsReached", "it completed by max trials")
        say(
            f"1. Applied it (resumePolicy FromVolume, random search, seed {SEED}) through "
            f"admission and defaulting, and ran it: {FIRST} trials in {steps} simulated seconds.",
            f"Experiment: {condition_text(experiment)}",
            *volume,
        )

    def local_volume(self, runtime: Runtime) -> list[str]:
        """The local volume mode's claims about the first run's PVC and PV, checked."""
        found = children(runtime, self.ns, self.name)
        check(PVC.kind in found and PV.kind in found, "the first run created a PVC and a PV")
        pv = runtime.cluster.get(PV.ref(self.ns, found[PV.kind][0]))
        pvc = runtime.cluster.get(PVC.ref(self.ns, found[PVC.kind][0]))
        algorithm = self.experiment.spec.algorithm.algorithm_name
        name = pv_name(self.name, algorithm, self.ns)
        path = per_volume_path(DEFAULT_LOCAL_VOLUME_PATH_PREFIX, name)
        spec, labels = pv["spec"], pv["metadata"].get("labels") or {}
        local_class = DEFAULT_SUGGESTION_STORAGE_CLASS
        check(pvc["spec"].get("storageClassName") == local_class, f"the PVC claims {local_class}")
        check(pvc["spec"].get("volumeName") == name, f"the PVC is pre-bound to {name}")
        check((pvc.get("status") or {}).get("phase") == "Bound", "the PVC is Bound")
        check(labels.get("type") == "local", "the PV is labelled type: local")
        check(spec.get("storageClassName") == local_class, f"the PV's class is {local_class}")
        check(host_path(pv) == path, f"the PV's hostPath is {path}")
        check((spec.get("claimRef") or {}).get("name") == found[PVC.kind][0], "pre-bound PV")
        directory = host_dir(runtime.world.volume_root, pv)
        check(directory is not None and directory.is_dir(), "the PV's directory exists")
        self.directory = directory or Path()
        return [
            f"PersistentVolumeClaim {found[PVC.kind][0]}: storage class {local_class}, "
            f"Bound to the local PV made for it",
            f"PersistentVolume {name}: type=local, hostPath {path}, pre-bound to its claim",
            f"on this machine the simulated node keeps it in {self.directory}",
        ]

    def completion(self) -> None:
        with session(self.options) as runtime:
            found = children(runtime, self.ns, self.name)
            check("Deployment" not in found and "Service" not in found, "service objects gone")
            check(PVC.kind in found and PV.kind in found, "the PVC and its PV are kept")
            pv = runtime.cluster.get(PV.ref(self.ns, found[PV.kind][0]))
            directory = host_dir(runtime.world.volume_root, pv)
        check(directory == self.directory, "the PV keeps the same directory")
        files = sorted(p.name for p in self.directory.iterdir())
        check("suggestion-state.json" in files, "the service saved its state on the volume")
        self.pvc = found[PVC.kind]
        say(
            "2. On completion the suggestion service was released: its Deployment and Service "
            "are gone, its volume and its directory are kept.",
            f"PersistentVolumeClaim {self.pvc[0]}, UID {self.pvc[1]}",
            f"PersistentVolume {found[PV.kind][0]}, directory {directory}: {', '.join(files)}",
        )

    def raise_budget(self) -> None:
        with session(self.options) as runtime:
            try:
                apply_edit(runtime, self.ns, self.name, {"maxTrialCount": TOO_LOW})
                denial = ""
            except Denied as denied:
                denial = str(denied)
            edited = apply_edit(runtime, self.ns, self.name, {"maxTrialCount": RAISED})
        check(bool(denial), f"admission denies maxTrialCount {TOO_LOW} after {FIRST} trials")
        check(edited.restarts(), f"maxTrialCount {RAISED} restarts the Experiment")
        say(
            f"3. Raised the budget through admission: maxTrialCount {TOO_LOW} is denied, "
            f"{RAISED} is allowed ({edited.changes()}), and the Experiment restarts.",
            f"Katib's denial of {TOO_LOW}: {denial}",
        )

    def resume(self) -> Assignments:
        with session(self.options) as runtime:
            before, mark = children(runtime, self.ns, self.name), len(runtime.cluster.events)
            steps = wait_until_running(runtime, self.ns, self.name)
            after = children(runtime, self.ns, self.name)
            report = restart_report(before, after, runtime.cluster.events[mark:], steps)
            deployment = after.get("Deployment")
            mounted = runtime.world.volume_dir(self.ns, deployment[0]) if deployment else None
            run_to_completion(runtime, EXPERIMENT.ref(self.ns, self.name))
            resumed = assignments(runtime, self.ns, self.name)
            experiment = runtime.cluster.get(EXPERIMENT.ref(self.ns, self.name))
        self.check_resume(report, after, resumed)
        check(mounted == self.directory, "the resumed service mounts the same directory")
        say(
            "4. Resumed from the volume: the service came back on the same PVC and PV, mounted "
            "the same directory and restored its search state from it.",
            *(line.strip() for line in report),
        )
        say(
            f"5. Completed again: trials {FIRST + 1}-{RAISED} continued the sequence; the first "
            f"{FIRST} assignments are unchanged and none is repeated.",
            f"Experiment: {condition_text(experiment)}",
        )
        return resumed

    def check_resume(self, report: list[str], after: Children, resumed: Assignments) -> None:
        restored = [line for line in report if "state restored from" in line]
        check(bool(restored) and f"({FIRST} assignments)" in restored[0], "state restored")
        check(after.get(PVC.kind) == self.pvc, "the restarted service mounts the same PVC (UID)")
        check("Deployment" in after and "Service" in after, "Deployment and Service come back")
        check(len(resumed) == RAISED, f"the resumed run reached {RAISED} trials")
        check(resumed[:FIRST] == self.first, "the first 12 assignments are untouched")
        check(not set(resumed[FIRST:]) & set(self.first), "trials 13-20 repeat no assignment")

    def same_as_uninterrupted(self, resumed: Assignments) -> None:
        manifest = self.experiment.to_dict()
        manifest["spec"]["maxTrialCount"] = RAISED
        with session(Options(self.scratch / "uninterrupted", seed=SEED)) as runtime:
            create(runtime, Experiment.model_validate(manifest), None, SEED)
            run_to_completion(runtime, EXPERIMENT.ref(self.ns, self.name))
            straight = assignments(runtime, self.ns, self.name)
        check(resumed == straight, "the resumed run equals an uninterrupted one")
        say(
            f"6. An uninterrupted {RAISED}-trial run with the same seed, in a second state "
            f"directory, made exactly the same {RAISED} assignments in the same order.",
            f"trial 13 both times: {_pairs(straight[FIRST])}",
        )

    def deletion(self) -> None:
        with session(self.options) as runtime:
            removal = delete_experiment(runtime, self.ns, self.name)
            left = [f"{o['kind']} {o['metadata']['name']}" for o in runtime.cluster.store.all()]
        check(not left, f"nothing is left after deletion (left: {', '.join(left)})")
        check(removal.directories == [self.directory] and not removal.kept, "directory removed")
        check(not self.directory.exists(), "the volume directory is gone")
        check(PV.kind in removal.objects, "the local PV is removed with the Experiment")
        say(
            "7. Deleted it: nothing is left in the cluster, and the volume is gone: the local PV "
            "and its directory were removed with the Experiment."
        )
        for line in removal.lines():
            print(f"     {line.strip()}")


def assignments(runtime: Runtime, namespace: str, name: str) -> Assignments:
    """The Suggestion's assignments in the order it made them, as comparable tuples."""
    suggestion = runtime.cluster.get(SUGGESTION.ref(namespace, name))
    return [
        tuple((str(p["name"]), str(p["value"])) for p in entry.get("parameterAssignments") or [])
        for entry in (suggestion.get("status") or {}).get("suggestions") or []
    ]


def _pairs(assignment: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{name}={value}" for name, value in assignment)


def _reason(experiment: Manifest) -> str:
    return str((last_condition(experiment) or {}).get("reason", ""))
