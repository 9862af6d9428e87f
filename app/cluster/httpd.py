"""The controller's probe and metrics endpoints: GET paths to ``(status, type, body)``, on aiohttp.

aiohttp's low-level ``web.Server`` (the HTTP/1.1 protocol, keep-alive, parsing) serves a table of
routes; the webhook runs on the same library (``docs/webhook.md`` says why aiohttp). A route is a
plain function, called in a thread of its own (the metrics exposition reads the controller's cache),
and one that raises answers 500 with one line. Nothing is logged per request: kubelet probes
every few seconds would drown the controller's own logs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from aiohttp import web

from katib_resume.app.common.serving import BackgroundLoop, blocking, listen

Answer = tuple[int, str, bytes]
Route = Callable[[], Answer]
TEXT = "text/plain; charset=utf-8"
GRACE_SECONDS = 1.0


class ProbeServer:
    def __init__(self, address: tuple[str, int], routes: Mapping[str, Route]) -> None:
        """Bound at once (``OSError`` if the address is taken), serving after ``start``."""
        self.routes = dict(routes)
        self._socket = listen(address)
        self._loop = BackgroundLoop("probes")
        self._server: asyncio.Server | None = None

    def start(self) -> ProbeServer:
        self._loop.start()
        self._loop.run(self._listen())
        return self

    @property
    def url(self) -> str:
        host, port = self._socket.getsockname()[:2]
        return f"http://{host!s}:{port}"

    def shutdown(self) -> None:
        if self._server is not None:
            self._loop.run(self._close(self._server))
        self._loop.stop()
        self._socket.close()

    async def _listen(self) -> None:
        self._http = web.Server(self._answer, access_log=None)
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._http, sock=self._socket)

    async def _close(self, server: asyncio.Server) -> None:
        server.close()
        self._http.pre_shutdown()
        await self._http.shutdown(GRACE_SECONDS)

    async def _answer(self, request: web.BaseRequest) -> web.Response:
        route = self.routes.get(request.path)
        if request.method not in ("GET", "HEAD"):
            status, kind, body = 405, TEXT, b"only GET\n"
        elif route is None:
            status, kind, body = 404, TEXT, b"not found\n"
        else:
            try:
                status, kind, body = await blocking(route)
            except Exception as error:
                status, kind, body = 500, TEXT, f"{type(error).__name__}: {error}\n".encode()
        return web.Response(status=status, body=body, headers={"Content-Type": kind})


def parse_address(text: str) -> tuple[str, int]:
    """``:8080`` or ``127.0.0.1:8080`` (``0`` picks a free port); ``ValueError`` otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected [HOST]:PORT, got {text!r}")
    return (host or "0.0.0.0", int(port))
