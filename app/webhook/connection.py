"""One client connection: aiohttp's HTTP/1.1 protocol, with a deadline and JSON for its errors.

aiohttp bounds an idle keep-alive connection but not a request in progress: a client that sends
one header byte every few seconds (slowloris) would hold its connection forever. So every
connection gets a deadline when it is accepted (``Limits.request_seconds``), re-armed after each
answer (``rearm``, called by the handler); at the deadline the connection is aborted (logged as
``connection-failed`` when a request was under way). It covers
the TLS handshake (the server gives the handshake the time left), reading the request and the
decision; idle keep-alive connections end at it too (clients reconnect).

The errors aiohttp answers itself (a malformed request line or header, a bad ``Content-Length``)
are answered as ``metav1.Status`` JSON too, with a one-line message, and logged as
``http-error``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from aiohttp import web

from katib_resume.app.common.logs import JsonLog
from katib_resume.app.webhook.routes import JSON, Reply
from katib_resume.app.webhook.routes import status as failure


class Connection(web.RequestHandler):
    def __init__(
        self,
        manager: web.Server,
        *,
        deadline: float,
        seconds: float,
        log: JsonLog,
        opened: Callable[[Connection], None],
        closed: Callable[[Connection], None],
        **kwargs: Any,
    ) -> None:
        """``deadline``: the loop time by which the first answer must have left."""
        super().__init__(manager, loop=asyncio.get_running_loop(), **kwargs)
        self._deadline, self._seconds, self._log = deadline, seconds, log
        self._opened, self._closed = opened, closed
        self._timer: asyncio.TimerHandle | None = None
        self._transport: asyncio.Transport | None = None
        self._peer: object = None
        self._receiving = False
        """Bytes came in since the last answer: a request is under way, not an idle wait."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport, self._peer = transport, transport.get_extra_info("peername")
        self._timer = asyncio.get_running_loop().call_at(self._deadline, self._expire)
        self._opened(self)
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self._receiving = True
        super().data_received(data)

    def rearm(self) -> None:
        self._receiving = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = asyncio.get_running_loop().call_later(self._seconds, self._expire)

    def abort(self) -> None:
        """End the connection now, without a TLS goodbye (shutdown, deadline)."""
        if self._transport is not None:
            self._transport.abort()

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._closed(self)
        super().connection_lost(exc)

    def _expire(self) -> None:
        """Cut the connection; a request cut off is logged, the end of an idle one is not."""
        if self._receiving:
            self._log.warning(
                "connection-failed",
                client=client_name(self._peer),
                error=f"deadline of {self._seconds} s passed",
            )
        if self._transport is not None:
            self._transport.abort()

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """aiohttp's own refusals, as JSON; the connection ends after them."""
        parts = [part.strip() for part in (message or "").splitlines()]
        line = " ".join(part for part in parts if part.strip("^ ")) or HTTPStatus(status).phrase
        self._log.warning("http-error", client=client_name(self._peer), message=f"{status} {line}")
        if request.writer.output_size > 0:
            raise ConnectionError("the answer has begun: no error can follow it")
        return reply_of(failure(status, line), close=True)


def reply_of(reply: Reply, *, close: bool = False) -> web.Response:
    """The reply as one JSON body; ``close`` ends the connection after it."""
    answer = web.Response(
        status=reply.status, body=json.dumps(reply.body).encode(), content_type=JSON
    )
    if close:
        answer.force_close()
    return answer


def client_name(address: object) -> str:
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else str(address)
