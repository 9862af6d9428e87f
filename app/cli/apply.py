"""``katib-resume apply -f EXPERIMENT.yaml``: create the Experiment, or update it, as kubectl does.

Both go through admission the way the other commands do, by calling them: a new Experiment is
created by ``run``'s ``create`` (Katib's validating webhook with the PVs that exist, its
defaulting, the seed recorded), an existing one is updated by ``edit``'s ``apply_edit`` (the
webhook's UPDATE rules against the stored object: only what Katib lets change may change, with
Katib's message and exit status 1 otherwise). Nothing runs: as after ``kubectl apply``, the
controller acts on it next, here in ``katib-resume run NAME``.

The update is the file's spec after Katib's defaulting, field by top-level field, compared with
the stored spec: only fields that differ are sent (``unchanged`` when none do), so a file
written before the defaults were filled in does not look like a change to every field. Labels
and annotations are the Experiment's from its creation: a file that changes them is refused
rather than silently half-applied.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from katib_resume.app.cli.edit import apply_edit
from katib_resume.app.cli.embedded_flags import DEFAULT_SEED
from katib_resume.app.cli.kinds import EXPERIMENT
from katib_resume.app.cli.run import create
from katib_resume.app.common.errors import InputError
from katib_resume.app.common.inputs import load_experiment
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.driver import DEFAULT_NAMESPACE, options
from katib_resume.app.embedded.runtime import Runtime
from katib_resume.core.defaults import default_experiment
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment
from katib_resume.core.ports import NotFound

EXIT_OK = 0


def apply(args: argparse.Namespace) -> int:
    experiment = load_experiment(args.filename)
    name, ns = experiment.metadata.name, _namespace(experiment, args.namespace, args.filename)
    seed = DEFAULT_SEED if args.seed is None else args.seed
    with session(replace(options(args, (ns, name)), seed=seed)) as runtime:
        stored = _stored(runtime, ns, name)
        if stored is None:
            create(runtime, experiment, ns, seed)
            print(f"{EXPERIMENT.name_of(name)} created")
            print(f"run it with `katib-resume run {name} -n {ns}`")
            return EXIT_OK
        if args.seed is not None:
            raise InputError(
                f"--seed does nothing here: {EXPERIMENT.name_of(name)} exists and keeps the "
                "seed it was created with"
            )
        changes = spec_changes(experiment, stored, args.filename)
        if not changes:
            print(f"{EXPERIMENT.name_of(name)} unchanged")
            return EXIT_OK
        edited = apply_edit(runtime, ns, name, changes)
    print(f"{EXPERIMENT.name_of(name)} configured ({', '.join(sorted(changes))})")
    print(edited.consequence())
    return EXIT_OK


def _namespace(experiment: Experiment, flag: str | None, path: str) -> str:
    own = experiment.metadata.namespace
    if flag and own and flag != own:
        raise InputError(
            f'{path}: the namespace from the provided object "{own}" does not match the '
            f'namespace "{flag}": remove -n or change the file'
        )
    return own or flag or DEFAULT_NAMESPACE


def _stored(runtime: Runtime, ns: str, name: str) -> Manifest | None:
    try:
        return runtime.cluster.get(EXPERIMENT.ref(ns, name))
    except NotFound:
        return None


def spec_changes(experiment: Experiment, stored: Manifest, path: str) -> Manifest:
    """The top-level spec fields whose defaulted value in the file differs from the stored."""
    wanted = default_experiment(experiment).to_dict()
    for part in ("labels", "annotations"):
        mine, theirs = wanted["metadata"].get(part) or {}, stored["metadata"].get(part) or {}
        if any(theirs.get(key) != value for key, value in mine.items()):
            raise InputError(
                f"{path}: apply changes an Experiment's spec; its {part} are kept from its "
                "creation (delete it and apply again to change them)"
            )
    current = stored.get("spec") or {}
    return {key: value for key, value in wanted["spec"].items() if current.get(key) != value}
