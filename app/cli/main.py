"""The ``katib-resume`` command line: thin wrappers over the core and the embedded runtime.

Exit status: 0 success; 1 admission denied (Katib's message printed); 2 bad input (one line that
names the file, the flag or the object and the problem, never a usage block or a traceback);
3 the demo found one of its own claims false. Heavy imports (the core's models, YAML, rich)
happen inside the commands, after parsing, so ``katib-resume --help`` starts fast.

The embedded commands (``run``, ``get``, ``describe``, ``edit``, ``delete``) share their flags
through a parent parser, so that they are accepted after the command name, as kubectl accepts
them: ``katib-resume get pvc -n team-a --state-dir DIR -o json``. Without ``-n`` a command works
in the namespace ``default``, as kubectl does, except ``run -f``, which uses the file's own.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from katib_resume.app.cli.manifest_flags import add_manifests
from katib_resume.app.common.wiring import (
    DEFAULT_NAMESPACE,
    HEALTH_PORT,
    METRICS_PORT,
    WEBHOOK_PORT,
)
from katib_resume.core.addresses import (
    DB_MANAGER_ADDRESS,
    EARLY_STOPPING_ENDPOINT,
    EARLY_STOPPING_PORT,
    SUGGESTION_ENDPOINT,
    SUGGESTION_PORT,
    SUGGESTION_TIMEOUT,
)
from katib_resume.core.names import CONFIG_MAP_NAME

EXIT_DENIED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left
DEFAULT_STATE_DIR = ".katib-resume"
GET_KINDS = "experiments|suggestions|trials|deployments|services|pvc|pv|events"
MAX_PORT = 65535
DEFAULT_CONFIG_MAP = (DEFAULT_NAMESPACE, CONFIG_MAP_NAME)


class Parser(argparse.ArgumentParser):
    """argparse with the project's error format: one line on stderr, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"katib-resume: error: {message} (see `{self.prog} --help`)\n")


def _whole(text: str, least: int, rule: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{rule}, got {value}")
    return value


def positive(text: str) -> int:
    """A count flag: a whole number of at least 1 (Katib's counts are positive)."""
    return _whole(text, 1, "must be at least 1")


def seconds(text: str) -> float:
    """A duration flag: a number of seconds greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def seed(text: str) -> int:
    return _whole(text, 0, "must not be negative")


def port(text: str) -> int:
    """``--port``: 1-65535, or 0 for any free one (the server logs the port it chose)."""
    value = _whole(text, 0, "must not be negative")
    if value > MAX_PORT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_PORT}, got {value}")
    return value


def config_map(text: str) -> tuple[str, str]:
    """``--config-map NAMESPACE/NAME``."""
    namespace, slash, name = text.partition("/")
    if not (slash and namespace and name) or "/" in name:
        raise argparse.ArgumentTypeError(f"expected NAMESPACE/NAME, got {text!r}")
    return namespace, name


def common_flags() -> Parser:
    """The flags every embedded command accepts after its name."""
    common = Parser(add_help=False)
    group = common.add_argument_group("embedded cluster")
    group.add_argument(
        "--state-dir",
        type=Path,
        default=Path(DEFAULT_STATE_DIR),
        metavar="DIR",
        help=f"where the embedded cluster is kept (default: ./{DEFAULT_STATE_DIR})",
    )
    group.add_argument(
        "--config",
        metavar="KATIB_CONFIG.yaml",
        help="katib-config; stored in the state directory for later commands "
        "(default: the stored one, else Katib's shipped one)",
    )
    group.add_argument(
        "--seed", type=seed, default=1, help="the search's seed, recorded on the Experiment"
    )
    group.add_argument(
        "-n",
        "--namespace",
        metavar="NS",
        help="default: 'default' as in kubectl ('run -f': the file's own namespace)",
    )
    return common


def add_core_commands(commands: argparse._SubParsersAction[Parser]) -> None:
    """The commands that need no cluster: ``plan``, ``validate``, ``diagram``."""
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


def add_embedded_commands(commands: argparse._SubParsersAction[Parser]) -> None:
    """The commands that work on the embedded cluster in ``--state-dir``."""
    common = [common_flags()]
    _add_run(commands, common)
    _add_readers(commands, common)
    _add_writers(commands, common)
    commands.add_parser(
        "demo", help="run Katib's from-volume example end to end in a temporary directory"
    )


def _add_run(commands: argparse._SubParsersAction[Parser], common: list[Parser]) -> None:
    run = commands.add_parser(
        "run", parents=common, help="apply an Experiment (or continue one) and run it to completion"
    )
    run.add_argument("name", nargs="?", metavar="NAME", help="continue this Experiment")
    run.add_argument("-f", "--filename", metavar="EXPERIMENT.yaml", help="create this Experiment")
    run.add_argument(
        "--trial-command",
        action="store_true",
        help="run the trial template's command locally (default: a synthetic objective)",
    )


def _add_readers(commands: argparse._SubParsersAction[Parser], common: list[Parser]) -> None:
    get = commands.add_parser("get", parents=common, help="list objects, as kubectl get")
    get.add_argument("kind", metavar="KIND", help=GET_KINDS)
    get.add_argument("name", nargs="?", metavar="NAME", help="only this object (events: about it)")
    get.add_argument("-o", "--output", choices=("wide", "yaml", "json"), help="default: a table")
    get.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    describe = commands.add_parser(
        "describe", parents=common, help="an object's fields, conditions and events as a timeline"
    )
    describe.add_argument("kind", metavar="KIND", help="experiment|suggestion")
    describe.add_argument("name", metavar="NAME")


def _add_writers(commands: argparse._SubParsersAction[Parser], common: list[Parser]) -> None:
    kinds = ("experiment", "experiments", "exp")
    edit = commands.add_parser(
        "edit", parents=common, help="change an Experiment's budget, through admission"
    )
    edit.add_argument("kind", choices=kinds, metavar="experiment")
    edit.add_argument("name", metavar="NAME")
    for flag in ("--max-trial-count", "--parallel-trial-count", "--max-failed-trial-count"):
        edit.add_argument(flag, type=positive, metavar="N")
    edit.add_argument(
        "--dry-run", action="store_true", help="show what the restart will do; change nothing"
    )
    delete = commands.add_parser(
        "delete", parents=common, help="delete an Experiment and wait until all of it is gone"
    )
    delete.add_argument("kind", choices=kinds, metavar="experiment")
    delete.add_argument("name", metavar="NAME")


def add_cluster_commands(commands: argparse._SubParsersAction[Parser]) -> None:
    """The commands that run in (or serve) a real cluster (``docs/cluster.md``,
    ``docs/webhook.md``)."""
    _add_controller(commands)
    _add_webhook(commands)
    _add_suggestion_server(commands)


def _add_suggestion_server(commands: argparse._SubParsersAction[Parser]) -> None:
    server = commands.add_parser(
        "suggestion-server",
        help="serve Katib's Suggestion and EarlyStopping gRPC APIs (docs/algorithms.md)",
    )
    server.add_argument(
        "--port", type=port, default=SUGGESTION_PORT, help="default: %(default)s (0: not served)"
    )
    server.add_argument(
        "--early-stopping-port",
        type=port,
        default=EARLY_STOPPING_PORT,
        help="default: %(default)s (0: not served)",
    )
    server.add_argument(
        "--data-dir",
        metavar="DIR",
        help="the suggestion volume (default: Katib's volumeMountPath, /opt/katib/data;"
        " '' keeps the state in memory)",
    )
    server.add_argument(
        "--seed", type=int, default=0, help="the search seed when random_state is unset"
    )


def _add_controller(commands: argparse._SubParsersAction[Parser]) -> None:
    controller = commands.add_parser(
        "controller", help="run the reconcile loop against a Kubernetes cluster"
    )
    controller.add_argument(
        "--kubeconfig", metavar="PATH", help="default: the pod's in-cluster service account"
    )
    scope = controller.add_mutually_exclusive_group()
    scope.add_argument("--namespace", metavar="NS", help="watch only this namespace")
    scope.add_argument(
        "--all-namespaces", action="store_true", help="watch every namespace (the default)"
    )
    controller.add_argument(
        "--config-map",
        type=config_map,
        metavar="NS/NAME",
        help=f"the katib-config ConfigMap (default: <own namespace>/{CONFIG_MAP_NAME})",
    )
    controller.add_argument("--metrics-addr", default=f":{METRICS_PORT}", metavar="[HOST]:PORT")
    controller.add_argument("--health-addr", default=f":{HEALTH_PORT}", metavar="[HOST]:PORT")
    controller.add_argument(
        "--leader-elect", action="store_true", help="reconcile only while holding the Lease"
    )
    controller.add_argument("--workers", type=positive, default=2, metavar="N")
    controller.add_argument(
        "--log-level", choices=("debug", "info", "warning", "error"), default="info"
    )
    grpc = controller.add_argument_group(
        "suggestion services (gRPC)",
        "Endpoint templates may use {service} (<name>-<algorithm>), {name}, {algorithm} and "
        f"{{namespace}}; for example 127.0.0.1:{SUGGESTION_PORT} through kubectl port-forward.",
    )
    grpc.add_argument(
        "--suggestion-endpoint",
        default=SUGGESTION_ENDPOINT,
        metavar="TEMPLATE",
        help="where a Suggestion's algorithm service answers (default: %(default)s)",
    )
    grpc.add_argument(
        "--early-stopping-endpoint",
        default=EARLY_STOPPING_ENDPOINT,
        metavar="TEMPLATE",
        help="where its early-stopping service answers (default: %(default)s)",
    )
    grpc.add_argument(
        "--suggestion-timeout",
        type=seconds,
        default=SUGGESTION_TIMEOUT,
        metavar="SECONDS",
        help="the deadline of every call to a suggestion service (default: %(default)s)",
    )
    grpc.add_argument(
        "--db-manager-address",
        default=DB_MANAGER_ADDRESS,
        metavar="HOST:PORT",
        help="Katib's DB manager, passed to early-stopping services (default: %(default)s)",
    )


def _add_webhook(commands: argparse._SubParsersAction[Parser]) -> None:
    webhook = commands.add_parser(
        "webhook", help="serve the admission webhook (validate and default Experiments) over HTTPS"
    )
    webhook.add_argument(
        "--cert-dir", required=True, metavar="DIR", help="holds tls.crt and tls.key (re-read)"
    )
    webhook.add_argument("--port", type=port, default=WEBHOOK_PORT, help=f"default: {WEBHOOK_PORT}")
    webhook.add_argument(
        "--kubeconfig", metavar="PATH", help="default: the in-cluster service account"
    )
    webhook.add_argument(
        "--config-map",
        type=config_map,
        default=DEFAULT_CONFIG_MAP,
        metavar="NS/NAME",
        help="the katib-config ConfigMap (default: {}/{})".format(*DEFAULT_CONFIG_MAP),
    )


def build_parser() -> Parser:
    parser = Parser(
        prog="katib-resume",
        description="Kubeflow Katib's resume-Experiment lifecycle, as a pure state machine.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_core_commands(commands)
    add_embedded_commands(commands)
    add_cluster_commands(commands)
    add_manifests(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from katib_resume.app.cli.commands import (
        run,  # after parsing: --help never pays for the core's imports
    )
    from katib_resume.app.common.inputs import InputError
    from katib_resume.app.common.output import one_line

    try:
        return run(args)
    except InputError as error:
        print(f"katib-resume: error: {one_line(str(error))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("katib-resume: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `katib-resume get ... | head`: the reader left, as with kubectl
        _silence_stdout()
        return EXIT_BROKEN_PIPE


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
