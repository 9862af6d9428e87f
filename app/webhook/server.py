"""The HTTPS server: standard library ``ThreadingHTTPServer`` over TLS, one thread per connection.

Transport is all this module and ``handler`` do; what a request means is ``routes.handle``. The
choices:

* TLS is negotiated in the connection's own thread (``do_handshake_on_connect=False``), so a
  client that stalls its handshake holds only its own thread, and the accept loop picks the
  current certificate for every new connection (``certs.Certificates``).
* Every connection has a deadline (``deadlines``), re-armed after each answer, on top of a
  per-read socket timeout: a slow or stalled client is cut off, never waited on.
* A body must come with a ``Content-Length`` of at most ``Limits.max_body`` (room for an object
  and its old version at the API server's size limit); a larger one is refused before it is read.
* At most ``Limits.max_connections`` connections are served at once; more are closed at accept.
* Keep-alive (HTTP/1.1), as the API server uses it. Errors that the standard library answers
  itself (a malformed request line, too many headers) are answered in JSON too.
* ``close`` stops accepting, lets requests in flight finish (up to ``Limits.grace_seconds``) and
  then ends every connection: SIGTERM loses no admission decision that was being made.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from katib_resume.app.common.logs import JsonLog
from katib_resume.app.webhook.admission import Admission
from katib_resume.app.webhook.certs import Certificates
from katib_resume.app.webhook.deadlines import Deadlines
from katib_resume.app.webhook.handler import Handler, client_name


@dataclass(frozen=True, slots=True)
class Limits:
    max_body: int = 7 * 1024 * 1024
    request_seconds: float = 10.0
    """Deadline of one request, idle keep-alive wait included (the API server's timeout: 10 s)."""
    io_seconds: float = 5.0
    """Longest wait for a single read or write."""
    max_connections: int = 128
    grace_seconds: float = 5.0


class WebhookServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        admission: Admission,
        certs: Certificates,
        log: JsonLog,
        limits: Limits = Limits(),
    ) -> None:
        self.admission, self.certs, self.log, self.limits = admission, certs, log, limits
        self.deadlines = Deadlines()
        self.in_flight = InFlight()
        self._serving = False
        try:
            super().__init__(address, Handler)
        except OSError:
            self.deadlines.stop()
            raise

    def start(self) -> threading.Thread:
        """Serve in a background thread (the caller's thread waits for signals)."""
        self._serving = True
        thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.1}, name="webhook", daemon=True
        )
        thread.start()
        return thread

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def get_request(self) -> tuple[Any, Any]:
        conn, address = self.socket.accept()
        try:
            wrapped = self.certs.context().wrap_socket(
                conn, server_side=True, do_handshake_on_connect=False
            )
        except OSError:
            conn.close()
            raise
        return wrapped, address

    def verify_request(self, request: Any, client_address: Any) -> bool:
        if self.deadlines.open_connections() < self.limits.max_connections:
            return True
        self.log.warning(
            "connection-refused",
            client=client_name(client_address),
            reason=f"{self.limits.max_connections} connections open",
        )
        return False

    def process_request(self, request: Any, client_address: Any) -> None:
        request.settimeout(self.limits.io_seconds)
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.deadlines.arm(request, self.limits.request_seconds)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.deadlines.disarm(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection failed (handshake, reset, deadline): log one line, no traceback."""
        error = sys.exc_info()[1]
        self.log.warning("connection-failed", client=client_name(client_address), error=repr(error))

    def close(self) -> None:
        """Stop accepting, let requests in flight finish (bounded), end all connections."""
        if self._serving:  # shutdown() waits for serve_forever: it would hang without one
            self.shutdown()
        self.in_flight.wait_idle(self.limits.grace_seconds)
        self.deadlines.expire_all()
        self.deadlines.stop()
        self.server_close()


class InFlight:
    """How many requests are being decided and answered, so that ``close`` can wait for them."""

    def __init__(self) -> None:
        self._count = 0
        self._changed = threading.Condition()

    @contextmanager
    def request(self) -> Iterator[None]:
        with self._changed:
            self._count += 1
        try:
            yield
        finally:
            with self._changed:
                self._count -= 1
                self._changed.notify_all()

    def wait_idle(self, seconds: float) -> None:
        """Until no request is in flight, or ``seconds`` have passed."""
        with self._changed:
            self._changed.wait_for(lambda: self._count == 0, timeout=seconds)


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
