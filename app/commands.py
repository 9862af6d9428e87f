"""The commands behind ``katib-resume``: read inputs, call the core, print, pick the exit status."""

from __future__ import annotations

import argparse
import sys

from app.inputs import InputError, load_config, load_experiment
from app.output import as_list, one_line, render
from app.preview import Denied, created_objects
from core.config import ConfigError
from core.lifecycle import LIFECYCLES
from core.validation import validate

EXIT_OK, EXIT_DENIED = 0, 1


def run(args: argparse.Namespace) -> int:
    command = {"plan": _plan, "validate": _validate, "diagram": _diagram}[args.command]
    return command(args)


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
