"""The commands behind ``katib-resume``: read inputs, call the core, print, pick the exit status.

``plan``, ``validate`` and ``diagram`` live here; the commands on the embedded cluster live in
one module per group (``cmd_run``, ``cmd_get``, ``cmd_describe``, ``cmd_edit``, ``cmd_delete``,
``cmd_demo``), the admission webhook in ``cmd_webhook``. An admission denial from any of them is
``Denied``: Katib's message on stderr and exit status 1, in this one place.
"""

from __future__ import annotations

import argparse
import sys

from app import (
    cmd_controller,
    cmd_delete,
    cmd_demo,
    cmd_describe,
    cmd_edit,
    cmd_get,
    cmd_manifests,
    cmd_run,
    cmd_webhook,
)
from app.inputs import InputError, load_config, load_experiment
from app.output import as_list, one_line, render
from app.preview import Denied, created_objects
from core.config import ConfigError
from core.lifecycle import LIFECYCLES
from core.validation import validate

EXIT_OK, EXIT_DENIED = 0, 1


def run(args: argparse.Namespace) -> int:
    command = {
        "plan": _plan,
        "validate": _validate,
        "diagram": _diagram,
        "run": cmd_run.run,
        "get": cmd_get.get,
        "describe": cmd_describe.describe,
        "edit": cmd_edit.edit,
        "delete": cmd_delete.delete,
        "demo": cmd_demo.demo,
        "controller": cmd_controller.controller,
        "manifests": cmd_manifests.manifests,
        "webhook": cmd_webhook.webhook,
    }[args.command]
    try:
        return command(args)
    except Denied as denied:
        print(one_line(str(denied)), file=sys.stderr)
        return EXIT_DENIED


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
