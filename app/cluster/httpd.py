"""A tiny HTTP server for probes and metrics: routes of GET paths to ``(status, type, body)``.

The standard library's threading server is enough for a few probes a second, starts in no time
and adds no dependency. A handler that raises answers 500 with one line; nothing is logged per
request (kubelet probes every few seconds would drown the controller's own logs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Answer = tuple[int, str, bytes]
Route = Callable[[], Answer]
TEXT = "text/plain; charset=utf-8"


class ProbeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], routes: Mapping[str, Route]) -> None:
        self.routes = dict(routes)
        super().__init__(address, _Handler)

    def start(self) -> ProbeServer:
        threading.Thread(target=self.serve_forever, name="probes", daemon=True).start()
        return self

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: ProbeServer

    def do_GET(self) -> None:
        route = self.server.routes.get(self.path.split("?", 1)[0])
        if route is None:
            status, kind, body = 404, TEXT, b"not found\n"
        else:
            try:
                status, kind, body = route()
            except Exception as error:
                status, kind, body = 500, TEXT, f"{type(error).__name__}: {error}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


def parse_address(text: str) -> tuple[str, int]:
    """``:8080`` or ``127.0.0.1:8080`` (``0`` picks a free port); ``ValueError`` otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected [HOST]:PORT, got {text!r}")
    return (host or "0.0.0.0", int(port))
