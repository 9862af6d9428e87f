"""The commands behind ``katib-resume``: read inputs, call the core, print, pick the exit status.

``plan``, ``validate`` and ``diagram`` live in ``offline``; the commands on the embedded cluster
live in one module each (``run``, ``apply``, ``get``, ``describe``, ``edit``, ``delete``,
``demo``), the controller, the webhook and the manifests in their own packages;
``handlers.HANDLERS`` says which function runs which command. An admission denial from any of
them is ``Denied``: Katib's message on stderr and exit status 1, in this one place.
"""

from __future__ import annotations

import argparse
import sys

from katib_resume.app.cli.handlers import HANDLERS
from katib_resume.app.common.output import one_line
from katib_resume.core.denied import Denied

EXIT_DENIED = 1


def run(args: argparse.Namespace) -> int:
    try:
        return HANDLERS[args.command](args)
    except Denied as denied:
        print(one_line(str(denied)), file=sys.stderr)
        return EXIT_DENIED
