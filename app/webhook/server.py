"""The HTTPS server: standard library ``ThreadingHTTPServer`` over TLS, one thread per connection.

Transport is all this module does; what a request means is ``routes.handle``. The choices:

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

import contextlib
import json
import re
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from app.webhook.admission import Admission
from app.webhook.certs import Certificates
from app.webhook.deadlines import Deadlines
from app.webhook.logs import JsonLog
from app.webhook.routes import Incoming, Reply, handle, status

CONTENT_LENGTH = re.compile(r"[0-9]{1,15}")
LINGER_SECONDS = 0.25
LINGER_BYTES = 1 << 20


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
        self._busy = 0
        self._idle = threading.Condition()
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
            client=_client(client_address),
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
        self.log.warning("connection-failed", client=_client(client_address), error=repr(error))

    def busy(self) -> _Busy:
        return _Busy(self)

    def close(self) -> None:
        """Stop accepting, let requests in flight finish (bounded), end all connections."""
        if self._serving:  # shutdown() waits for serve_forever: it would hang without one
            self.shutdown()
        deadline = time.monotonic() + self.limits.grace_seconds
        with self._idle:
            while self._busy and time.monotonic() < deadline:
                self._idle.wait(deadline - time.monotonic())
        self.deadlines.expire_all()
        self.deadlines.stop()
        self.server_close()


class _Busy:
    """Counts a request being decided, so that ``close`` can wait for it."""

    def __init__(self, server: WebhookServer) -> None:
        self._server = server

    def __enter__(self) -> None:
        with self._server._idle:
            self._server._busy += 1

    def __exit__(self, *_: object) -> None:
        with self._server._idle:
            self._server._busy -= 1
            self._server._idle.notify_all()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "katib-resume-webhook"
    wbufsize = 1 << 16
    """Buffered: headers and body leave in one write (flushed after each request), so delayed
    ACKs and Nagle's algorithm never add 40 ms to an answer."""
    sys_version = ""
    server: WebhookServer
    connection: ssl.SSLSocket

    def setup(self) -> None:
        super().setup()
        self.connection.do_handshake()

    def do_POST(self) -> None:
        body = self._read_body()
        if body is None:
            return
        with self.server.busy():
            incoming = Incoming(self.command, self.path, self.headers.get("Content-Type"), body)
            reply = handle(self.server.admission, self.server.log, incoming)
            self._send(reply)
            self.wfile.flush()  # inside: shutdown waits until the answer has left
        self.server.deadlines.arm(self.connection, self.server.limits.request_seconds)

    def do_GET(self) -> None:
        self.do_POST()  # the route decides what each method may do

    def do_PUT(self) -> None:
        self.do_POST()

    def do_PATCH(self) -> None:
        self.do_POST()

    def do_DELETE(self) -> None:
        self.do_POST()

    def _read_body(self) -> bytes | None:
        """The body, or None once an error has been answered (and the connection is closing)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self._refuse(411, "a Content-Length is required (chunked bodies are not accepted)")
            return None
        length = self.headers.get("Content-Length")
        if length is None:
            if self.command == "POST":
                self._refuse(411, "a Content-Length is required")
                return None
            return b""
        if CONTENT_LENGTH.fullmatch(length.strip()) is None:
            self._refuse(400, f"Content-Length is not a whole number: {length[:40]!r}")
            return None
        size = int(length)
        if size > self.server.limits.max_body:
            limit = self.server.limits.max_body
            self._refuse(413, f"body of {size} bytes is over the limit of {limit}")
            return None
        return self._read_exactly(size)

    def _refuse(self, code: int, message: str) -> None:
        """Answer before the body is read, then discard what the client still sends, briefly.

        Closing a connection with unread data makes TCP reset it, and a client still writing
        its body would see the reset instead of our answer (a lingering close, as nginx does).
        """
        self.send_error(code, message)
        self.wfile.flush()
        deadline = time.monotonic() + LINGER_SECONDS
        with contextlib.suppress(OSError, ValueError):
            self.connection.settimeout(LINGER_SECONDS)
            discarded = 0
            while discarded < LINGER_BYTES and time.monotonic() < deadline:
                chunk = self.rfile.read1(1 << 16)
                if not chunk:
                    break
                discarded += len(chunk)

    def _read_exactly(self, size: int) -> bytes | None:
        try:
            body = self.rfile.read(size)
        except TimeoutError:
            self.send_error(408, f"body not received within {self.server.limits.io_seconds} s")
            return None
        if len(body) < size:  # the client went away mid-body: nobody to answer
            self.close_connection = True
            return None
        return body

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Every error the standard library or we answer, as one-line JSON; the connection ends."""
        self.log_error("%d %s", code, message or "")
        self.close_connection = True
        self._send(status(code, message or HTTPStatus(code).phrase))

    def _send(self, reply: Reply) -> None:
        data = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Silent: admissions are logged with their decision (``routes``), errors below."""

    def log_message(self, format: str, *args: Any) -> None:
        self.server.log.warning(
            "http-error", client=_client(self.client_address), message=format % args
        )


def _client(address: Any) -> str:
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else str(address)


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
