"""An asyncio event loop in a thread of its own, for the aiohttp servers of synchronous binaries.

The controller and the webhook are synchronous programs (their main thread waits for a signal,
the controller's workers are threads), while their HTTP servers are aiohttp's, which run on an
event loop. ``BackgroundLoop`` is the bridge: the loop runs in a daemon thread, ``run`` hands it a
coroutine and waits for the result, and ``stop`` cancels what is left, waits for the worker
threads of ``asyncio.to_thread`` and closes the loop, so a stopped server leaves no task behind to
be reported as destroyed while pending.

Only ``asyncio`` and ``threading`` here: the servers import aiohttp themselves, when they start.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def listen(address: tuple[str, int], backlog: int = 128) -> socket.socket:
    """A listening IPv4 socket (address reuse on, as servers want); ``OSError`` if taken.

    Not ``socket.create_server``: its error text names the address, and the binaries' one-line
    start-up errors say it themselves.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class BackgroundLoop:
    def __init__(self, name: str, *, workers: int) -> None:
        """``workers``: threads for blocking work handed out with ``asyncio.to_thread``."""
        self._loop = asyncio.new_event_loop()
        self._loop.set_default_executor(
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"{name}-worker")
        )
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the loop and wait for its result (its exception is raised here)."""
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def stop(self) -> None:
        """Cancel every task left, let the worker threads finish, close the loop."""
        if not self._thread.is_alive():
            self._loop.close()
            return
        self.run(_drain())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


async def _drain() -> None:
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_default_executor()
