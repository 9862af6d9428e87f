"""One connection's HTTP exchange: read a bounded body, let ``routes.handle`` decide, answer.

``http.server`` parses the request line and headers; this handler adds what an admission webhook
facing an API server (and anything else that reaches its port) needs: the TLS handshake in the
connection's own thread, a body only with a ``Content-Length`` under the limit, JSON for every
answer including the standard library's own errors, and a lingering close after refusing a body
it did not read. Answers leave in one write (a buffered ``wfile``, flushed per request), so
delayed ACKs and Nagle's algorithm never add 40 ms to an answer.
"""

from __future__ import annotations

import contextlib
import json
import re
import ssl
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from katib_resume.app.webhook.routes import Incoming, Reply, handle, status

if TYPE_CHECKING:
    from katib_resume.app.webhook.server import WebhookServer

CONTENT_LENGTH = re.compile(r"[0-9]{1,15}")
LINGER_SECONDS = 0.25
LINGER_BYTES = 1 << 20


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "katib-resume-webhook"
    wbufsize = 1 << 16  # buffered: one write per answer (flushed after each request)
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
        with self.server.in_flight.request():
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
            "http-error", client=client_name(self.client_address), message=format % args
        )


def client_name(address: Any) -> str:
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else str(address)
