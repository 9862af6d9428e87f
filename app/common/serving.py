"""An asyncio event loop in a thread of its own, for the aiohttp servers of synchronous binaries.

The controller and the webhook are synchronous programs (their main thread waits for a signal,
the controller's workers are threads), while their HTTP servers are aiohttp's, which run on an
event loop. ``BackgroundLoop`` is the bridge: the loop runs in a daemon thread, ``run`` hands it a
coroutine and waits for the result, and ``stop`` cancels what is left and closes the loop, so a
stopped server leaves no task behind to be reported as destroyed while pending.

Blocking work (an admission decision reads the cluster) leaves the loop through ``blocking``: a
daemon thread per call, as the standard library's threading servers do per connection. Not
``asyncio.to_thread``: its pool's threads are joined when the interpreter exits, so one decision
stuck on an unreachable API server would hold up the exit after SIGTERM; a daemon thread is
abandoned, its answer dropped (the connection has been closed by then).

Only ``asyncio``, ``socket`` and ``threading`` here: the servers import aiohttp themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket
import threading
from collections.abc import Callable, Coroutine
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


async def blocking(work: Callable[[], T]) -> T:
    """``work()`` in a daemon thread; its result (or exception) here, without blocking the loop."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not answer.done():  # cancelled meanwhile: nobody waits for it
            outcome()

    def run() -> None:
        outcome: Callable[[], None]
        try:
            outcome = functools.partial(answer.set_result, work())
        except BaseException as error:
            outcome = functools.partial(answer.set_exception, error)
        with contextlib.suppress(RuntimeError):  # the loop was closed: the answer is dropped
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=run, name="blocking", daemon=True).start()
    return await answer


class BackgroundLoop:
    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the loop and wait for its result (its exception is raised here)."""
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def stop(self) -> None:
        """Cancel every task left, close the loop."""
        if self._thread.is_alive():
            self.run(_drain())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        self._loop.close()


async def _drain() -> None:
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
