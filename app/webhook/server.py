"""The HTTPS server: aiohttp's HTTP/1.1 protocol over asyncio's TLS, one event loop thread.

Transport is all this module, ``connection`` and ``handler`` do; what a request means is
``routes.handle``. The choices:

* The server accepts connections itself (``loop.sock_accept``) and hands each to asyncio's TLS
  (``loop.connect_accepted_socket``) with the certificate current at that moment
  (``certs.Certificates``): a rotated certificate is served to the next connection, without a
  restart. A handshake has until the connection's deadline; a stalled one holds nothing else up.
* At most ``Limits.max_connections`` connections (handshaking or open) at once; more are closed
  at accept, before any TLS, and logged as ``connection-refused``.
* Every connection has a deadline (``connection``), re-armed after each answer, and each read of
  a body a timeout (``handler``): a slow or stalled client is cut off, never waited on.
* A body must come with a ``Content-Length`` of at most ``Limits.max_body`` (room for an object
  and its old version at the API server's size limit); a larger one is refused before it is read.
* Keep-alive (HTTP/1.1), as the API server uses it.
* ``close`` stops accepting, lets requests in flight finish (up to ``Limits.grace_seconds``) and
  then ends every connection: SIGTERM loses no admission decision that was being made.

Synchronous callers (the command, the tests) drive it through ``start`` and ``close``; the loop
runs in its own thread (``common.serving``).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from katib_resume.app.common.logs import JsonLog
from katib_resume.app.common.serving import BackgroundLoop, listen
from katib_resume.app.webhook.admission import Admission
from katib_resume.app.webhook.certs import Certificates
from katib_resume.app.webhook.connection import Connection, client_name
from katib_resume.app.webhook.handler import Endpoint

LINGER_SECONDS = 0.25
BACKSTOP_SECONDS = 1.0
"""asyncio's own handshake timeout, after ours: only if shutting the socket down did not end it."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_body: int = 7 * 1024 * 1024
    request_seconds: float = 10.0
    """Deadline of one request, idle keep-alive wait included (the API server's timeout: 10 s)."""
    io_seconds: float = 5.0
    """Longest wait for a single read of a body, or for a TLS goodbye."""
    max_connections: int = 128
    grace_seconds: float = 5.0


class WebhookServer:
    def __init__(
        self,
        address: tuple[str, int],
        admission: Admission,
        certs: Certificates,
        log: JsonLog,
        limits: Limits = Limits(),
    ) -> None:
        """Bound at once (``OSError`` if the address is taken), serving after ``start``."""
        self.admission, self.certs, self.log, self.limits = admission, certs, log, limits
        self._socket = listen(address)
        self._loop = BackgroundLoop("webhook")
        self._handshakes: set[asyncio.Task[None]] = set()
        self._connections: set[Connection] = set()
        self._started = False

    @property
    def port(self) -> int:
        return int(self._socket.getsockname()[1])

    def open_connections(self) -> int:
        """Connections accepted and not yet ended (handshakes included)."""
        return len(self._handshakes) + len(self._connections)

    def start(self) -> None:
        """Serve from the loop's thread (the caller's thread waits for signals)."""
        self._started = True
        self._loop.start()
        self._loop.run(self._listen())

    def close(self) -> None:
        """Stop accepting, let requests in flight finish (bounded), end all connections."""
        if self._started:
            self._loop.run(self._shutdown())
        self._loop.stop()
        self._socket.close()

    async def _listen(self) -> None:
        self._http = web.Server(Endpoint(self.admission, self.log, self.limits))
        self._accepting = asyncio.create_task(self._accept())

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            conn, address = await loop.sock_accept(self._socket)
            if self.open_connections() >= self.limits.max_connections:
                reason = f"{self.limits.max_connections} connections open"
                self.log.warning("connection-refused", client=client_name(address), reason=reason)
                conn.close()
                continue
            handshake = loop.create_task(self._serve(conn, address, loop.time()))
            self._handshakes.add(handshake)
            handshake.add_done_callback(self._handshakes.discard)

    async def _serve(self, conn: socket.socket, address: object, accepted: float) -> None:
        """TLS on ``conn``, then aiohttp's protocol on it (a ``Connection``) until it ends."""
        deadline, cut = accepted + self.limits.request_seconds, list[bool]()
        loop = asyncio.get_running_loop()
        late = loop.call_at(deadline, self._cut_handshake, conn, address, cut)
        try:
            await self._handshake(conn, deadline)
        except OSError as error:
            conn.close()
            if not cut:  # else ``_cut_handshake`` logged it
                client = client_name(address)
                self.log.warning("connection-failed", client=client, error=repr(error))
        except asyncio.CancelledError:
            conn.close()
            raise
        finally:
            late.cancel()

    async def _handshake(self, conn: socket.socket, deadline: float) -> None:
        loop, handshake = asyncio.get_running_loop(), asyncio.current_task()

        def opened(connection: Connection) -> None:
            """Counted once: as a connection from now on, no longer as a handshake."""
            self._handshakes.discard(handshake)
            self._connections.add(connection)

        await loop.connect_accepted_socket(
            lambda: self._connection(deadline, opened),
            conn,
            ssl=self.certs.context(),
            ssl_handshake_timeout=deadline - loop.time() + BACKSTOP_SECONDS,
            ssl_shutdown_timeout=self.limits.io_seconds,
        )

    def _cut_handshake(self, conn: socket.socket, address: object, cut: list[bool]) -> None:
        """The deadline passed during the handshake: log it, then end the connection (in this
        order, so that whoever sees it end finds it logged)."""
        cut.append(True)
        seconds = self.limits.request_seconds
        error = f"TLS handshake not done within the deadline of {seconds} s"
        self.log.warning("connection-failed", client=client_name(address), error=error)
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_RDWR)

    def _connection(self, deadline: float, opened: Callable[[Connection], None]) -> Connection:
        return Connection(
            self._http,
            deadline=deadline,
            seconds=self.limits.request_seconds,
            log=self.log,
            opened=opened,
            closed=self._connections.discard,
            access_log=None,
            keepalive_timeout=self.limits.request_seconds,
            lingering_time=LINGER_SECONDS,
        )

    async def _shutdown(self) -> None:
        self._accepting.cancel()
        for handshake in list(self._handshakes):
            handshake.cancel()
        self._http.pre_shutdown()  # idle keep-alive connections end now
        await self._http.shutdown(self.limits.grace_seconds)  # busy ones once answered
        for connection in list(self._connections):
            connection.abort()  # no wait for a TLS goodbye
        await asyncio.gather(*self._handshakes, return_exceptions=True)
        loop = asyncio.get_running_loop()
        until = loop.time() + 1.0
        while self._connections and loop.time() < until:
            await asyncio.sleep(0.01)  # an abort's connection_lost comes a loop turn later


def create_server(
    admission: Admission,
    cert_dir: Path,
    port: int,
    log: JsonLog,
    *,
    host: str = "0.0.0.0",
    limits: Limits = Limits(),
) -> WebhookServer:
    """A bound server (not yet serving); ``CertificateError`` or ``OSError`` if it cannot be."""
    certs = Certificates(cert_dir, log)
    return WebhookServer((host, port), admission, certs, log, limits)


__all__ = ["Limits", "WebhookServer", "create_server"]
