"""Which function runs each command: a typed table whose entries import their module on call.

Each entry is a small function that imports the module behind the command and calls it, so the
type checker sees every call (a renamed function, or one that takes other arguments, fails
``mypy``), while ``katib-resume --help`` and the parse of any command import none of them: the
embedded runtime, the controller and the webhook each bring heavy imports (``kubernetes``,
``pydantic``, ``grpc``) that a ``plan`` never needs. A test checks that the table and the
parser name the same commands.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

Command = Callable[[argparse.Namespace], int]


def _plan(args: argparse.Namespace) -> int:
    from katib_resume.app.cli.offline import plan

    return plan(args)


def _validate(args: argparse.Namespace) -> int:
    from katib_resume.app.cli.offline import validate_command

    return validate_command(args)


def _diagram(args: argparse.Namespace) -> int:
    from katib_resume.app.cli.offline import diagram

    return diagram(args)


def _run(args: argparse.Namespace) -> int:
    from katib_resume.app.cli.run import run

    return run(args)


def _apply(args: argparse.Namespace) -> int:
    from katib_resume.app.cli.apply import apply

    return apply(args)


def _get(args: argparse.Namespace) -> int:
    from katib_resume.app.cli.get import get

    return get(args)


def _describe(args: argparse.Namespace) -> int:
    from katib_resume.app.cli.describe import describe

    return describe(args)


def _edit(args: argparse.Namespace) -> int:
    from katib_resume.app.cli.edit import edit

    return edit(args)


def _delete(args: argparse.Namespace) -> int:
    from katib_resume.app.cli.delete import delete

    return delete(args)


def _demo(args: argparse.Namespace) -> int:
    from katib_resume.app.cli.demo import demo

    return demo(args)


def _controller(args: argparse.Namespace) -> int:
    from katib_resume.app.cluster.main import controller

    return controller(args)


def _manifests(args: argparse.Namespace) -> int:
    from katib_resume.app.manifests.main import manifests

    return manifests(args)


def _webhook(args: argparse.Namespace) -> int:
    from katib_resume.app.webhook.main import webhook

    return webhook(args)


def _suggestion_server(args: argparse.Namespace) -> int:
    from katib_resume.app.suggestion.main import suggestion_server

    return suggestion_server(args)


HANDLERS: Final[Mapping[str, Command]] = MappingProxyType(
    {
        "plan": _plan,
        "validate": _validate,
        "diagram": _diagram,
        "run": _run,
        "apply": _apply,
        "get": _get,
        "describe": _describe,
        "edit": _edit,
        "delete": _delete,
        "demo": _demo,
        "controller": _controller,
        "manifests": _manifests,
        "webhook": _webhook,
        "suggestion-server": _suggestion_server,
    }
)
