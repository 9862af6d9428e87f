"""``katib-resume run``: apply an Experiment (or continue one) and run it until it completes.

``run -f FILE`` is what ``kubectl apply`` does against a cluster with Katib installed: admission
(``core.admission.admit``: Katib's validating webhook, with the names of the PVs that exist, so a
PV left over by a deleted FromVolume Experiment is refused as Katib refuses it, then Katib's
defaulting webhook), then the create. The seed is recorded on the Experiment
(``ANNOTATION_SEED``) so that a later ``run NAME``, after ``edit`` raised the budget, continues
the *same* search whatever ``--seed`` it is given. ``run NAME`` continues an existing
Experiment: that is where a restart happens.

Either way the runtime steps until the Experiment is completed and the controller is at rest
(``driver.settle``), with a progress bar on stderr when it is a terminal (plain lines when not,
so logs stay readable), then prints the Trials and the Experiment's last condition.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from katib_resume.adapters.fake.persistence import exists
from katib_resume.app.cli.kinds import EXPERIMENT, PV, SUGGESTION, TRIAL, find
from katib_resume.app.cli.runnable import refuse_unrunnable
from katib_resume.app.cli.serving import serving
from katib_resume.app.cli.tables import objective_value
from katib_resume.app.common.errors import InputError, NotFoundError
from katib_resume.app.common.inputs import embedded_config, load_config, load_experiment
from katib_resume.app.common.output import table
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.driver import (
    DEFAULT_NAMESPACE,
    EXIT_FAILED,
    MAX_STEPS,
    condition_text,
    failure,
    namespace,
    options,
    require_state,
    settle,
    small_grid,
    unlimited,
)
from katib_resume.app.embedded.runtime import Runtime
from katib_resume.core.actions import ObjectRef
from katib_resume.core.admission import admit
from katib_resume.core.config import ConfigError
from katib_resume.core.katib import ANNOTATION_SEED, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.objective import best_trial
from katib_resume.core.ports import AlreadyExists, NotFound
from katib_resume.core.trial_phases import COMPLETED_STATUS_KEYS
from katib_resume.core.trials import has_budget
from katib_resume.core.validation import is_restartable

EXIT_OK = 0


def run(args: argparse.Namespace) -> int:
    if (args.filename is None) == (args.name is None):
        raise InputError("run needs either -f EXPERIMENT.yaml (create) or NAME (continue)")
    experiment = load_experiment(args.filename) if args.filename else None
    if experiment is None:
        require_state(args.state_dir, f'experiment "{args.name}"')
    else:
        refuse_unrunnable(experiment)  # before the state directory is touched
        refuse_inadmissible(experiment, args)
    with session(options(args, *_focus(experiment, args.namespace))) as runtime:
        ref, endless = begin(runtime, experiment, args)
        with serving(runtime, args) as server, progress(runtime, ref) as on_step:
            run_to_completion(runtime, ref, on_step, endless=endless, between=server.serve)
        if not _current(runtime, ref):
            raise NotFoundError(deleted(ref))
        sys.stdout.write(report(runtime, ref))
        failed = failure(runtime.cluster, ref)
    if failed:
        print(f"katib-resume: {failed}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def begin(
    runtime: Runtime, experiment: Experiment | None, args: argparse.Namespace
) -> tuple[ObjectRef, bool]:
    """The Experiment to run, created from ``experiment`` or found by ``args.name``, and
    whether it has no trial limit; how it will run said on stderr (also for a ``run`` that
    the holder of the state directory does for another command: ``serving``)."""
    if experiment is not None:
        ref = create(runtime, experiment, args.namespace, args.seed)
    else:
        ref = ObjectRef.of(find(runtime.cluster, EXPERIMENT, namespace(args), args.name))
    endless = unlimited(runtime.cluster, ref)
    if _will_run(runtime.cluster.get(ref)):
        for notice in (endless, small_grid(runtime.cluster, ref)):
            if notice:
                print(f"katib-resume: {notice}", file=sys.stderr)
    return ref, endless is not None


def deleted(ref: ObjectRef) -> str:
    """kubectl's NotFound line for an Experiment deleted while it ran (by another command)."""
    return (
        f'Error from server (NotFound): experiments.kubeflow.org "{ref.name}" not found: '
        "deleted while it ran"
    )


def _will_run(manifest: Manifest) -> bool:
    """Whether the Experiment has Trials ahead: not completed, or completed and about to be
    restarted (Katib's restart rule, with room in its budget). A notice of how it will run is
    noise on a ``run`` of an Experiment that has finished for good."""
    experiment = Experiment.model_validate(manifest)
    if not experiment.is_completed():
        return True
    return is_restartable(experiment) and has_budget(experiment.spec, experiment.status.trials)


def _focus(experiment: Experiment | None, ns: str | None) -> list[tuple[str, str]]:
    """The Experiment a ``run -f`` file holds, where it will be created (as ``_in_namespace``)."""
    if experiment is None:
        return []
    where = experiment.to_dict()["metadata"].get("namespace") or ns or DEFAULT_NAMESPACE
    return [(str(where), experiment.metadata.name)]


def create(runtime: Runtime, experiment: Experiment, ns: str | None, seed: int) -> ObjectRef:
    """Admit, default and create ``experiment``; ``core.denied.Denied`` if refused."""
    experiment = _in_namespace(experiment, ns)
    cluster = runtime.cluster
    if _current(runtime, EXPERIMENT.ref(experiment.namespace, experiment.metadata.name)):
        raise _already_exists(experiment)  # before admission: its own PV would be "stale"
    config = runtime.controller.config.katib_config()
    admitted = admit(experiment, catalog=config, existing_pvs=existing_pvs(runtime))
    manifest = admitted.to_dict()
    manifest["metadata"].setdefault("annotations", {})[ANNOTATION_SEED] = str(seed)
    try:
        return ObjectRef.of(cluster.create(manifest))
    except AlreadyExists:
        raise _already_exists(experiment) from None


def refuse_inadmissible(experiment: Experiment, args: argparse.Namespace) -> None:
    """``Denied`` where the session's admission would deny ``experiment`` in a state directory
    that holds no state yet, before the directory is made: a new one holds no PV, and its
    katib-config is the one given (``--config``) or the embedded default. So a refused ``run
    -f`` leaves no state behind. (A config that does not load is left for the session to
    report, as it always was; a directory with a state is admitted against it, in the session.)"""
    if exists(args.state_dir):
        return
    try:
        catalog = load_config(args.config) if args.config else embedded_config()
    except (InputError, ConfigError):
        return
    admit(_in_namespace(experiment, args.namespace), catalog=catalog, existing_pvs=frozenset())


def existing_pvs(runtime: Runtime) -> frozenset[str]:
    """The names of the PersistentVolumes in the runtime's world (for the stale-PV rule)."""
    found = runtime.cluster.list(PV.api_version, PV.kind, None, {})
    return frozenset(pv["metadata"]["name"] for pv in found)


def _already_exists(experiment: Experiment) -> InputError:
    name, where = experiment.metadata.name, experiment.namespace
    return InputError(
        f'experiment "{name}" already exists in namespace "{where}"; '
        f"use `katib-resume run {name} -n {where}` or `edit`"
    )


def _in_namespace(experiment: Experiment, ns: str | None) -> Experiment:
    """The file's namespace wins; ``-n`` fills it in, and must agree with it (as in kubectl)."""
    manifest = experiment.to_dict()
    own = manifest["metadata"].get("namespace")
    if ns and own and ns != own:
        raise InputError(
            f'the namespace from the provided object "{own}" does not match the namespace '
            f'"{ns}": remove -n or change the file'
        )
    manifest["metadata"]["namespace"] = own or ns or DEFAULT_NAMESPACE
    return Experiment.model_validate(manifest)


def run_to_completion(
    runtime: Runtime,
    ref: ObjectRef,
    on_step: Callable[[], None] | None = None,
    *,
    endless: bool = False,
    between: Callable[[], None] | None = None,
) -> int:
    """Step until the Experiment is Succeeded or Failed (or deleted) and the controller is at
    rest (with no trial limit, for as long as that takes: only a stall or Ctrl-C ends it
    otherwise); ``between`` after every step."""
    return settle(
        runtime,
        lambda: not _current(runtime, ref) or is_completed(runtime, ref),
        f"{ref} to complete",
        on_step=on_step,
        status=lambda: _both(runtime, ref),
        max_steps=None if endless else MAX_STEPS,
        between=between,
    )


def _both(runtime: Runtime, ref: ObjectRef) -> str:
    """The Experiment's and its Suggestion's last conditions: where a stuck run is stuck."""
    suggestion = SUGGESTION.ref(ref.namespace or DEFAULT_NAMESPACE, ref.name)
    return (
        f"Experiment {condition_text(_current(runtime, ref))}; "
        f"Suggestion {condition_text(_current(runtime, suggestion))}"
    )


def is_completed(runtime: Runtime, ref: ObjectRef) -> bool:
    return Experiment.model_validate(runtime.cluster.get(ref)).is_completed()


def _current(runtime: Runtime, ref: ObjectRef) -> Manifest:
    try:
        return runtime.cluster.get(ref)
    except NotFound:
        return {}


def completed_trials(experiment: Manifest) -> int:
    status = experiment.get("status") or {}
    return sum(int(status.get(counter) or 0) for counter in COMPLETED_STATUS_KEYS)


@contextmanager
def progress(runtime: Runtime, ref: ObjectRef) -> Iterator[Callable[[], None]]:
    """An ``on_step`` callback that shows trials completed / maxTrialCount on stderr."""

    def counts() -> tuple[int, int | None]:
        experiment = _current(runtime, ref)
        return completed_trials(experiment), (experiment.get("spec") or {}).get("maxTrialCount")

    with shown(f"{ref.namespace}/{ref.name}", counts) as update:
        yield update


@contextmanager
def shown(label: str, counts: Callable[[], tuple[int, int | None]]) -> Iterator[Callable[[], None]]:
    """An update callback showing ``counts()`` (completed, maxTrialCount): a bar on a terminal,
    else a line each time they change (also for a ``run`` handed over: ``handover``)."""
    if sys.stderr.isatty():
        with _bar(label, counts) as update:
            yield update
    else:
        yield _lines(label, counts)


def _lines(label: str, counts: Callable[[], tuple[int, int | None]]) -> Callable[[], None]:
    """Plain progress for logs and pipes: one line each time the count changes."""
    shown: list[tuple[int, int | None]] = []

    def line() -> None:
        now = counts()
        if not shown or shown[-1] != now:
            shown.append(now)
            print(f"{label}: {now[0]}/{now[1] or '-'} trials completed", file=sys.stderr)

    return line


@contextmanager
def _bar(label: str, counts: Callable[[], tuple[int, int | None]]) -> Iterator[Callable[[], None]]:
    """A rich progress bar on a terminal (imported here: rich is slow to import)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    console = Console(file=sys.stderr)  # this stream, not one a request's capture puts there
    with Progress(*columns, TextColumn("trials"), console=console) as bar:
        done, total = counts()
        task = bar.add_task(label, completed=done, total=total)

        def update() -> None:
            done, total = counts()
            bar.update(task, completed=done, total=total)

        yield update


def report(runtime: Runtime, ref: ObjectRef) -> str:
    """The Trials in assignment order (values, objective, status), then the last condition."""
    experiment = runtime.cluster.get(ref)
    namespace, name = ref.namespace or DEFAULT_NAMESPACE, ref.name
    raw = runtime.cluster.list(TRIAL.api_version, TRIAL.kind, namespace, {LABEL_EXPERIMENT: name})
    order = _assignment_order(runtime, SUGGESTION.ref(namespace, name))
    trials = sorted(raw, key=lambda t: (order.get(t["metadata"]["name"], len(order)), _name(t)))
    spec = experiment.get("spec") or {}
    params = [str(p.get("name")) for p in spec.get("parameters") or []]
    metric = str((spec.get("objective") or {}).get("objectiveMetricName", "objective"))
    headers = ["TRIAL", *(p.upper() for p in params), metric.upper(), "STATUS"]
    cells = [_trial_row(trial, params) for trial in trials]
    text = table(headers, cells) if cells else "No trials.\n"
    model = Experiment.model_validate(experiment)
    best = best_trial(model.spec.objective, [Trial.model_validate(t) for t in trials])
    if best is not None:
        text += f"Best trial: {best.trial} ({metric}={best.value:g})\n"
    return text + f"Experiment {namespace}/{name}: {condition_text(experiment)}\n"


def _trial_row(trial: Manifest, params: list[str]) -> list[str]:
    values = {
        str(p.get("name")): str(p.get("value"))
        for p in (trial.get("spec") or {}).get("parameterAssignments") or []
    }
    conditions = (trial.get("status") or {}).get("conditions") or []
    true = [c["type"] for c in conditions if c.get("status") == "True"]
    status = true[-1] if true else "Pending"
    return [_name(trial), *(values.get(p, "") for p in params), objective_value(trial), status]


def _assignment_order(runtime: Runtime, ref: ObjectRef) -> dict[str, int]:
    try:
        suggestion = runtime.cluster.get(ref)
    except NotFound:
        return {}
    given = (suggestion.get("status") or {}).get("suggestions") or []
    return {str(entry.get("name")): index for index, entry in enumerate(given)}


def _name(obj: Manifest) -> str:
    return str(obj["metadata"]["name"])
