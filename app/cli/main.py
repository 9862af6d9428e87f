"""The ``katib-resume`` command line: thin wrappers over the core and the embedded runtime.

Exit status: 0 success; 1 admission denied (Katib's message printed), an object not found
(kubectl's ``Error from server (NotFound): ...``) or a selector or output template that does not
parse, as kubectl exits; 2 bad input (one line that names the file, the flag or the object and
the problem, never a usage block or a traceback); 3 the demo found one of its own claims false.
Heavy imports (the core's models, YAML, rich) happen inside the commands, after parsing, so
``katib-resume --help`` starts fast: the dispatch table (``handlers``) imports a command's module
only when that command runs.

Each command accepts only the flags it uses (``embedded_flags``). ``-n NS`` and ``--state-dir
DIR`` may also be given before the command, as kubectl users type its global flags
(``katib-resume -n kubeflow get pods``, ``katib-resume --state-dir DIR get pv``); they are moved
after the command's name, so each means exactly what it means there, and a command without the
flag refuses it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from katib_resume.app.cli.embedded_flags import add_embedded_commands, check
from katib_resume.app.cli.flag_types import config_map, port, positive, seconds
from katib_resume.app.cli.manifest_flags import add_manifests
from katib_resume.app.common.wiring import (
    DEFAULT_NAMESPACE,
    HEALTH_PORT,
    METRICS_PORT,
    RELIST_SECONDS,
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

EXIT_DENIED = EXIT_NOT_FOUND = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left
NAMESPACE_FLAGS = ("-n", "--namespace")
STATE_DIR_FLAG = "--state-dir"
HOISTED = (*NAMESPACE_FLAGS, STATE_DIR_FLAG)
DEFAULT_CONFIG_MAP = (DEFAULT_NAMESPACE, CONFIG_MAP_NAME)


class Parser(argparse.ArgumentParser):
    """argparse with the project's error format: one line on stderr, exit status 2.

    ``gathers`` names a positional list that takes words wherever they are, as kubectl takes
    its arguments: argparse ends a positional at the first flag, so the NAME in
    ``get trial -n kubeflow NAME`` would otherwise be "unrecognized".
    """

    gathers: str | None = None

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"katib-resume: error: {message} (see `{self.prog} --help`)\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if self.gathers is not None:
            words = [word for word in extras if not word.startswith("-")]
            setattr(parsed, self.gathers, [*getattr(parsed, self.gathers), *words])
            extras = [word for word in extras if word.startswith("-")]
        return parsed, extras


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
    diagram.add_argument("lifecycle", choices=("suggestion", "experiment", "trial"))


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
        "--relist-seconds",
        type=seconds,
        default=RELIST_SECONDS,
        metavar="SECONDS",
        help="list every watched kind again this often, the repair of a watch event lost "
        "without an error (default: %(default)s)",
    )
    controller.add_argument(
        "--log-level", choices=("debug", "info", "warning", "error"), default="info"
    )
    controller.add_argument(
        "--run-trials",
        action="store_true",
        help="also run Trials as Katib's trial controller does: create and watch their Jobs "
        "(and the trialResources kinds the cluster serves), read katib-db-manager",
    )
    controller.add_argument(
        "--metrics-wait",
        type=seconds,
        default=300.0,
        metavar="SECONDS",
        help="how long a succeeded run waits for its metrics before it is MetricsUnavailable "
        "(default: %(default)s)",
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
        help="Katib's DB manager: passed to early-stopping services, and read for Trials' "
        "metrics with --run-trials (default: %(default)s)",
    )


def _add_webhook(commands: argparse._SubParsersAction[Parser]) -> None:
    webhook = commands.add_parser(
        "webhook",
        help="serve the admission webhooks (validate and default Experiments, inject the "
        "metrics collector into Trial pods) over HTTPS",
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
    webhook.add_argument(
        "--db-manager-address",
        default=DB_MANAGER_ADDRESS,
        metavar="HOST:PORT",
        help="Katib's DB manager, where the injected metrics collector reports "
        "(default: %(default)s)",
    )


def build_parser() -> Parser:
    parser = Parser(
        prog="katib-resume",
        description="Kubeflow Katib's resume-Experiment lifecycle, as a pure state machine.",
    )
    parser.add_argument(
        *NAMESPACE_FLAGS,
        metavar="NS",
        dest="namespace_first",
        help="the namespace of the command that follows (as `kubectl -n NS get ...`)",
    )
    parser.add_argument(
        STATE_DIR_FLAG,
        metavar="DIR",
        dest="state_dir_first",
        help="the state directory of the embedded command that follows",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_core_commands(commands)
    add_embedded_commands(commands)
    add_cluster_commands(commands)
    add_manifests(commands)
    return parser


def hoist_flags(argv: Sequence[str], parser: Parser) -> list[str]:
    """``-n NS --state-dir DIR COMMAND ...`` as ``COMMAND -n NS --state-dir DIR ...``: each the
    command's own flag, where it parses.

    Only what precedes the command is moved; a flag without its value is left for the parser
    to report, and a command that lacks a moved flag refuses it here, in one line.
    """
    words, moved, flags, at = list(argv), [], set(), 0
    while at < len(words) and words[at].startswith("-"):
        word = words[at]
        flag = _hoisted(word)
        if flag is None or (word in HOISTED and at + 1 == len(words)):
            at += 1
            continue
        taken = 2 if word in HOISTED else 1
        moved += words[at : at + taken]
        del words[at : at + taken]
        flags.add(flag)
    if not moved or at == len(words):
        return list(argv)
    command = _commands(parser).get(words[at])
    if command is not None and not flags <= command._option_string_actions.keys():
        parser.error(f"{'/'.join(sorted(flags))} does nothing for {words[at]}")
    return [*words[: at + 1], *moved, *words[at + 1 :]]


def _hoisted(word: str) -> str | None:
    """The flag a word before the command gives, when it is one that moves: ``-n``,
    ``--namespace`` and ``--state-dir``, alone or with their value attached."""
    if word in HOISTED:
        return word
    if word.startswith("--namespace="):
        return "--namespace"
    if word.startswith(f"{STATE_DIR_FLAG}="):
        return STATE_DIR_FLAG
    if word.startswith("-n") and not word.startswith("--"):
        return "-n"
    return None


def _commands(parser: Parser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each command (argparse keeps them in its subparsers action)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(hoist_flags(sys.argv[1:] if argv is None else argv, parser))
    check(args, parser)
    from katib_resume.app.cli.commands import (
        run,  # after parsing: --help never pays for the core's imports
    )

    try:
        return answered(args, lambda: run(args))
    except KeyboardInterrupt:
        print("katib-resume: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `katib-resume get ... | head`: the reader left, as with kubectl
        _silence_stdout()
        return EXIT_BROKEN_PIPE


def answered(args: argparse.Namespace, call: Callable[[], int]) -> int:
    """``call()``'s exit status, with a refusal printed as one line and its status: the
    command's own, and also a command another one does for it (``serving``)."""
    from katib_resume.adapters.fake.lazy import DamagedObject
    from katib_resume.adapters.fake.persistence import START_OVER, StateFileError
    from katib_resume.app.common.errors import InputError, NotFoundError, RequestError
    from katib_resume.app.common.output import one_line

    try:
        return call()
    except NotFoundError as error:
        print(one_line(str(error)), file=sys.stderr)
        return EXIT_NOT_FOUND
    except InputError as error:
        print(f"katib-resume: error: {one_line(str(error))}", file=sys.stderr)
        return EXIT_NOT_FOUND if isinstance(error, RequestError) else EXIT_BAD_INPUT
    except DamagedObject as error:  # a Trial's body is decoded when first read (``lazy``)
        where = f"{args.state_dir}: " if getattr(args, "state_dir", None) else ""
        message = f"{where}cannot use the fake cluster's state ({error}); {START_OVER}"
        print(f"katib-resume: error: {one_line(message)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except StateFileError as error:  # the Events are decoded when first read (``deferred``)
        print(f"katib-resume: error: {one_line(str(error))}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
