"""The commands behind ``katib-resume``: read inputs, call the core, print, pick the exit status.

``plan``, ``validate`` and ``diagram`` live in ``offline``; the commands on the embedded cluster
live in one module each (``run``, ``apply``, ``get``, ``describe``, ``edit``, ``delete``,
``demo``), the controller, the webhook and the manifests in their own packages;
``handlers.HANDLERS`` says which function runs which command. An admission denial from any of
them is ``Denied``: Katib's message on stderr and exit status 1, in this one place. A writing
command that finds its state directory locked by another is handed over to it here
(``handover``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from katib_resume.app.cli.handlers import HANDLERS
from katib_resume.app.common.errors import Busy
from katib_resume.app.common.output import one_line
from katib_resume.core.denied import Denied

EXIT_DENIED = 1
HANDED = frozenset({"run", "apply", "edit", "delete"})
"""The commands that write the state directory: one that finds it locked hands itself over."""


def run(args: argparse.Namespace) -> int:
    return refusing(lambda: _handed(args))


def refusing(call: Callable[[], int]) -> int:
    """``call()``'s exit status, an admission denial printed as Katib's message (status 1)."""
    try:
        return call()
    except Denied as denied:
        print(one_line(str(denied)), file=sys.stderr)
        return EXIT_DENIED


def _handed(args: argparse.Namespace) -> int:
    """The command, or, when another command holds its state directory, the answer of the
    ``run`` holding it (``handover``); done here again if the holder ends first."""
    while True:
        try:
            return HANDLERS[args.command](args)
        except Busy:
            if args.command not in HANDED:
                raise
            from katib_resume.app.cli.handover import hand_over

            outcome = hand_over(args)
            if isinstance(outcome, int):
                return outcome
            args = outcome
