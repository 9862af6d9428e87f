"""The commands behind ``katib-resume``: read inputs, call the core, print, pick the exit status.

``plan``, ``validate`` and ``diagram`` live here; the commands on the embedded cluster live in
one module per group (``cmd_run``, ``cmd_get``, ``cmd_describe``, ``cmd_edit``, ``cmd_delete``,
``cmd_demo``), the admission webhook in ``cmd_webhook``. An admission denial from any of them is
``Denied``: Katib's message on stderr and exit status 1, in this one place.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

from katib_resume.app.cli.preview import Denied, created_objects
from katib_resume.app.common.inputs import InputError, load_config, load_experiment
from katib_resume.app.common.output import as_list, one_line, render
from katib_resume.core.config import ConfigError
from katib_resume.core.lifecycle import LIFECYCLES
from katib_resume.core.validation import validate

EXIT_OK, EXIT_DENIED = 0, 1
Command = Callable[[argparse.Namespace], int]
ELSEWHERE = {
    "run": ("katib_resume.app.cli.run", "run"),
    "get": ("katib_resume.app.cli.get", "get"),
    "describe": ("katib_resume.app.cli.describe", "describe"),
    "edit": ("katib_resume.app.cli.edit", "edit"),
    "delete": ("katib_resume.app.cli.delete", "delete"),
    "demo": ("katib_resume.app.cli.demo", "demo"),
    "controller": ("katib_resume.app.cluster.main", "controller"),
    "manifests": ("katib_resume.app.manifests.main", "manifests"),
    "webhook": ("katib_resume.app.webhook.main", "webhook"),
    "suggestion-server": ("katib_resume.app.suggestion.main", "suggestion_server"),
}
"""The commands of their own modules, imported only when chosen: the embedded runtime, the
controller and the webhook each bring heavy imports a ``plan`` or ``validate`` never needs."""


def run(args: argparse.Namespace) -> int:
    try:
        return _command(args.command)(args)
    except Denied as denied:
        print(one_line(str(denied)), file=sys.stderr)
        return EXIT_DENIED


def _command(name: str) -> Command:
    here: dict[str, Command] = {"plan": _plan, "validate": _validate, "diagram": _diagram}
    if name in here:
        return here[name]
    module, function = ELSEWHERE[name]
    chosen: Command = getattr(importlib.import_module(module), function)
    return chosen


def _plan(args: argparse.Namespace) -> int:
    experiment = load_experiment(args.filename)
    config = load_config(args.config)
    try:
        objects = created_objects(experiment, config)
    except (Denied, ConfigError) as error:
        raise InputError(f"{args.filename}: {error}") from None
    sys.stdout.write(render(as_list(objects), args.output))
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    new = load_experiment(args.filename)
    old = load_experiment(args.old) if args.old else None
    config = load_config(args.config)
    decision = validate(new, old, catalog=config, existing_pvs=frozenset(args.existing_pv))
    if decision.allowed:
        print(f"allowed: Experiment {new.namespace}/{new.metadata.name}")
        return EXIT_OK
    print(one_line(decision.message), file=sys.stderr)
    return EXIT_DENIED


def _diagram(args: argparse.Namespace) -> int:
    sys.stdout.write(LIFECYCLES[args.lifecycle].diagram())
    return EXIT_OK
