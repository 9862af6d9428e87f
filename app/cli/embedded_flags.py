"""The flags of the commands on the embedded cluster: each command gets only the flags it uses.

A flag that would do nothing for a command is not accepted by it (``get --config`` is
"unrecognized arguments", one line, exit 2), so a user who expected it to do something learns at
once that it does not. Flags are accepted after the command's name in any order, as kubectl
accepts them: ``katib-resume get pvc -n team-a --state-dir DIR -o json``. ``-n`` and
``--state-dir`` may also come before the command (``katib-resume -n kubeflow get pods``):
``main`` moves them after the name.

What depends on another flag is checked in ``check`` once parsing is done: ``--seed`` is recorded
when an Experiment is created, so ``run NAME --seed`` (which continues an existing Experiment,
with the seed it was created with) is refused, as is ``apply --seed`` of one that exists (which
only ``apply`` can tell). Only ``argparse`` is imported here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from katib_resume.app.cli.flag_types import output, positive, seed

if TYPE_CHECKING:
    from katib_resume.app.cli.main import Parser

DEFAULT_STATE_DIR = ".katib-resume"
DEFAULT_SEED = 1
KINDS = "experiments|suggestions|trials|deployments|services|pvc|pv|events"
TARGETS = "KIND[,KIND...] [NAME...] or KIND/NAME..."
EXPERIMENT_WORDS = ("experiment", "experiments", "exp")


def _cluster(parser: argparse.ArgumentParser) -> None:
    """``--state-dir`` and ``-n``: every embedded command's."""
    group = parser.add_argument_group("embedded cluster")
    group.add_argument(
        "--state-dir",
        type=Path,
        default=Path(DEFAULT_STATE_DIR),
        metavar="DIR",
        help=f"where the embedded cluster is kept (default: ./{DEFAULT_STATE_DIR})",
    )
    group.add_argument(
        "-n",
        "--namespace",
        metavar="NS",
        help="default: 'default' as in kubectl ('run -f', 'apply -f': the file's own namespace)",
    )


def _config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="KATIB_CONFIG.yaml",
        help="katib-config; stored in the state directory for later commands "
        "(default: the stored one, else Katib's shipped one)",
    )


def _seed(parser: argparse.ArgumentParser, when: str) -> None:
    parser.add_argument(
        "--seed",
        type=seed,
        metavar="N",
        help=f"the search's seed, recorded on the Experiment {when} (default: {DEFAULT_SEED})",
    )


def add_embedded_commands(commands: argparse._SubParsersAction[Parser]) -> None:
    """The commands that work on the embedded cluster in ``--state-dir``."""
    _add_run(commands)
    _add_apply(commands)
    _add_get(commands)
    _add_describe(commands)
    _add_edit(commands)
    _add_delete(commands)
    commands.add_parser(
        "demo", help="run Katib's from-volume example end to end in a temporary directory"
    )


def _add_run(commands: argparse._SubParsersAction[Parser]) -> None:
    run = commands.add_parser(
        "run", help="apply an Experiment (or continue one) and run it to completion"
    )
    run.add_argument("name", nargs="?", metavar="NAME", help="continue this Experiment")
    run.add_argument("-f", "--filename", metavar="EXPERIMENT.yaml", help="create this Experiment")
    run.add_argument(
        "--trial-command",
        action="store_true",
        help="run each Trial's primary container command as a local process, up to "
        "parallelTrialCount at once (default: a simulated container printing a synthetic "
        "objective)",
    )
    _cluster(run)
    _config(run)
    _seed(run, "with -f")


def _add_apply(commands: argparse._SubParsersAction[Parser]) -> None:
    apply = commands.add_parser(
        "apply", help="create an Experiment, or update it, through admission (as kubectl apply)"
    )
    apply.add_argument("-f", "--filename", required=True, metavar="EXPERIMENT.yaml")
    _cluster(apply)
    _config(apply)
    _seed(apply, "when it is created")


def _add_get(commands: argparse._SubParsersAction[Parser]) -> None:
    get = commands.add_parser("get", help="list objects, as kubectl get")
    get.add_argument(
        "targets",
        nargs="+",
        metavar="RESOURCE",
        help=f"{TARGETS}; kinds: {KINDS} (events NAME: the Events about NAME)",
    )
    get.add_argument(
        "-o",
        "--output",
        type=output,
        metavar="FORMAT",
        help="wide, yaml, json, name or jsonpath=TEMPLATE "
        "(kubectl's: '{.items[*].metadata.name}'; default: a table)",
    )
    get.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    _selector(get)
    _cluster(get)
    get.gathers = "targets"


def _selector(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-l",
        "--selector",
        metavar="SELECTOR",
        help="only objects whose labels match: k=v, k!=v, k, !k, k in (a,b), k notin (a,b)",
    )


def _add_describe(commands: argparse._SubParsersAction[Parser]) -> None:
    describe = commands.add_parser(
        "describe", help="an object's fields, conditions and events as a timeline"
    )
    describe.add_argument(
        "targets", nargs="+", metavar="RESOURCE", help=f"{TARGETS}; kinds: {KINDS}"
    )
    _selector(describe)
    _cluster(describe)
    describe.gathers = "targets"


def _add_edit(commands: argparse._SubParsersAction[Parser]) -> None:
    edit = commands.add_parser("edit", help="change an Experiment's budget, through admission")
    edit.add_argument("kind", choices=EXPERIMENT_WORDS, metavar="experiment")
    edit.add_argument("name", metavar="NAME")
    for flag in ("--max-trial-count", "--parallel-trial-count", "--max-failed-trial-count"):
        edit.add_argument(flag, type=positive, metavar="N")
    edit.add_argument(
        "--dry-run", action="store_true", help="show what the restart will do; change nothing"
    )
    _cluster(edit)
    _config(edit)
    edit.set_defaults(seed=DEFAULT_SEED)  # the session's; an edit creates no Experiment


def _add_delete(commands: argparse._SubParsersAction[Parser]) -> None:
    delete = commands.add_parser("delete", help="delete objects and wait until all of each is gone")
    delete.add_argument("targets", nargs="*", metavar="RESOURCE", help=f"{TARGETS}; kinds: {KINDS}")
    delete.add_argument(
        "-f", "--filename", metavar="FILE.yaml", help="delete the objects this file describes"
    )
    _selector(delete)
    _cluster(delete)
    delete.gathers = "targets"
    delete.set_defaults(config=None, seed=DEFAULT_SEED)  # the session's: the stored config


def check(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """What depends on another flag; ``parser.error`` (one line, exit 2) when it is wrong."""
    if args.command == "run":
        if args.name is not None and args.seed is not None:
            parser.error(
                "--seed does nothing for `run NAME`: the Experiment continues with the seed "
                "recorded when it was created"
            )
        args.seed = DEFAULT_SEED if args.seed is None else args.seed
    if args.command == "delete" and (args.filename is None) == (not args.targets):
        parser.error("delete needs either KIND NAME... (or KIND/NAME) or -f FILE, not both")
    if args.command == "get" and args.all_namespaces and args.namespace:
        parser.error("-n does nothing with -A (every namespace)")
