"""One HTTP request on aiohttp: read a bounded body, let ``routes.handle`` decide, answer in JSON.

aiohttp parses the request line and headers; this handler adds what an admission webhook facing
an API server (and anything else that reaches its port) needs: a body only with a
``Content-Length`` under the limit, each read of it bounded by ``Limits.io_seconds`` (408 when
the client stalls), and the decision made in a thread of its own, since the admission reads the
cluster with blocking calls. A refusal sent before the body was read closes the connection, and
aiohttp's lingering close reads (and drops) what the client still sends for a moment, so that the
client sees the answer instead of a reset.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiohttp import web

from katib_resume.app.common.logs import JsonLog
from katib_resume.app.common.serving import blocking
from katib_resume.app.webhook.admission import Admission
from katib_resume.app.webhook.connection import Connection, reply_of
from katib_resume.app.webhook.routes import Incoming, Reply, handle, status

if TYPE_CHECKING:
    from katib_resume.app.webhook.server import Limits

CONTENT_LENGTH = re.compile(r"[0-9]{1,15}")


class Refused(Exception):
    """The request is answered with ``reply`` before its body was read, and the connection ends."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.body.get("message"))
        self.reply = reply


@dataclass(frozen=True, slots=True)
class Endpoint:
    admission: Admission
    log: JsonLog
    limits: Limits

    async def __call__(self, request: web.BaseRequest) -> web.StreamResponse:
        try:
            body = await self._body(request)
        except Refused as refused:
            return reply_of(refused.reply, close=True)
        except ConnectionError:  # the client went away mid-body: nobody to answer
            return web.Response(status=400)
        content_type = request.headers.get("Content-Type")
        incoming = Incoming(request.method, request.raw_path, content_type, body)
        if request.method == "POST":  # an admission: it may read the cluster, with blocking calls
            reply = await blocking(lambda: handle(self.admission, self.log, incoming))
        else:  # health, or a refusal: nothing to wait for
            reply = handle(self.admission, self.log, incoming)
        if isinstance(request.protocol, Connection):
            request.protocol.rearm()  # the connection's deadline starts again after each answer
        return reply_of(reply)

    async def _body(self, request: web.BaseRequest) -> bytes:
        if "chunked" in request.headers.get("Transfer-Encoding", "").lower():
            raise Refused(
                status(411, "a Content-Length is required (chunked bodies are not accepted)")
            )
        length = request.headers.get("Content-Length")
        if length is None:
            if request.method == "POST":
                raise Refused(status(411, "a Content-Length is required"))
            return b""
        if CONTENT_LENGTH.fullmatch(length.strip()) is None:
            raise Refused(status(400, f"Content-Length is not a whole number: {length[:40]!r}"))
        size, limit = int(length), self.limits.max_body
        if size > limit:
            raise Refused(status(413, f"body of {size} bytes is over the limit of {limit}"))
        return await self._read(request, size)

    async def _read(self, request: web.BaseRequest, size: int) -> bytes:
        chunks, got = [], 0
        while got < size:
            try:
                chunk = await asyncio.wait_for(request.content.readany(), self.limits.io_seconds)
            except TimeoutError:
                seconds = self.limits.io_seconds
                raise Refused(status(408, f"body not received within {seconds} s")) from None
            if not chunk:
                raise ConnectionError("end of stream inside the body")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)
