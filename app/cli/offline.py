"""The commands that need no state directory: ``plan``, ``validate`` and ``diagram``.

Each reads its inputs, calls the core, prints and returns the exit status; admission's refusal
(``Denied``) is turned into Katib's message and exit status 1 by ``commands.run``, as for
every command.
"""

from __future__ import annotations

import argparse
import sys

from katib_resume.app.cli.preview import Denied, created_objects
from katib_resume.app.common.errors import InputError
from katib_resume.app.common.inputs import load_config, load_experiment
from katib_resume.app.common.output import as_list, one_line, render
from katib_resume.core.config import ConfigError
from katib_resume.core.defaults import default_experiment
from katib_resume.core.lifecycle import LIFECYCLES
from katib_resume.core.validation import validate

EXIT_OK, EXIT_DENIED = 0, 1


def plan(args: argparse.Namespace) -> int:
    experiment = load_experiment(args.filename)
    config = load_config(args.config)
    try:
        objects = created_objects(experiment, config)
    except (Denied, ConfigError) as error:
        raise InputError(f"{args.filename}: {error}") from None
    sys.stdout.write(render(as_list(objects), args.output))
    return EXIT_OK


def validate_command(args: argparse.Namespace) -> int:
    new = default_experiment(load_experiment(args.filename))  # the mutating webhook runs first
    old = default_experiment(load_experiment(args.old)) if args.old else None
    config = load_config(args.config)
    decision = validate(new, old, catalog=config, existing_pvs=frozenset(args.existing_pv))
    if decision.allowed:
        print(f"allowed: Experiment {new.namespace}/{new.metadata.name}")
        return EXIT_OK
    print(one_line(decision.message), file=sys.stderr)
    return EXIT_DENIED


def diagram(args: argparse.Namespace) -> int:
    sys.stdout.write(LIFECYCLES[args.lifecycle].diagram())
    return EXIT_OK
