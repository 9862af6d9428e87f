"""What the cluster binaries (``controller``, ``webhook``) share around their work: reaching the
API server, with bad credentials as one line (exit status 2), and stopping on SIGTERM or SIGINT.

The ``kubernetes`` import happens inside ``connect``, so that ``--help`` never pays for it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from katib_resume.app.common.errors import InputError

if TYPE_CHECKING:
    from katib_resume.adapters.k8s.transport import Transport


def connect(kubeconfig: str | None) -> Transport:
    """A transport to the API server of ``kubeconfig`` (in-cluster when ``None``); no usable
    credentials is bad input, not a traceback."""
    from katib_resume.adapters.k8s.connect import ConnectError
    from katib_resume.adapters.k8s.connect import connect as connect_to

    try:
        return connect_to(kubeconfig)
    except ConnectError as error:
        raise InputError(str(error)) from None


def stop_on_signals(stop: threading.Event, noted: Callable[[str], None] | None = None) -> None:
    """Set ``stop`` on SIGTERM (what Kubernetes sends a Pod) or SIGINT, after telling ``noted``
    the signal's name."""

    def handle(number: int, _frame: object) -> None:
        if noted is not None:
            noted(signal.Signals(number).name)
        stop.set()

    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, handle)


def wait_until(stop: threading.Event) -> None:
    """Block until ``stop`` is set, waking twice a second. A signal sent to the process may be
    delivered to any thread that does not block it (gRPC's and aiohttp's threads do not), and
    Python runs its handler only in the main thread, the next time that thread runs bytecode:
    a main thread blocked in ``stop.wait()`` without a timeout may never run it."""
    while not stop.wait(0.5):
        pass
