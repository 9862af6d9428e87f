"""The ``katib-resume`` command line: thin wrappers over the core.

Exit status: 0 success; 1 admission denied (Katib's message printed); 2 bad input (one line that
names the file and the problem). Heavy imports (the core's models, YAML) happen inside the
commands, so ``katib-resume --help`` starts fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

EXIT_DENIED = 1
EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="katib-resume",
        description="Kubeflow Katib's resume-Experiment lifecycle, as a pure state machine.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plan = commands.add_parser(
        "plan", help="print the objects the controller creates for an Experiment"
    )
    plan.add_argument("-f", "--filename", required=True, metavar="EXPERIMENT.yaml")
    plan.add_argument("--config", metavar="KATIB_CONFIG.yaml", help="default: Katib's shipped one")
    plan.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    validate = commands.add_parser("validate", help="the admission decision for an Experiment")
    validate.add_argument("-f", "--filename", required=True, metavar="NEW.yaml")
    validate.add_argument("--old", metavar="OLD.yaml", help="the stored Experiment (an UPDATE)")
    validate.add_argument(
        "--existing-pv",
        action="append",
        default=[],
        metavar="NAME",
        help="a PersistentVolume that exists in the cluster (repeatable)",
    )
    validate.add_argument(
        "--config", metavar="KATIB_CONFIG.yaml", help="default: Katib's shipped one"
    )
    diagram = commands.add_parser("diagram", help="print a lifecycle's Mermaid state diagram")
    diagram.add_argument("lifecycle", choices=("suggestion", "experiment"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from app.commands import run  # after parsing: --help never pays for the core's imports
    from app.inputs import InputError
    from app.output import one_line

    try:
        return run(args)
    except InputError as error:
        print(f"katib-resume: error: {one_line(str(error))}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
