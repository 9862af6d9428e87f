"""JSON over the official client's HTTP stack: requests, retries, timeouts and watch streams.

The adapter keeps objects as plain dicts (the core's ``Manifest``), so it uses the
``kubernetes`` client for what it does well (kubeconfig and in-cluster credentials, TLS,
authentication, connection pooling) and not its typed models: a Katib Experiment has no model
there, and converting Deployments to models and back would cost time and drop unknown fields.

Every request has a timeout. Throttling (429), server errors (5xx) and requests that got no
answer are retried a few times with jittered exponential backoff, waiting at least the
server's ``Retry-After``; whatever is still failing then reaches the controller as
``Unavailable``, whose own backoff takes over. Retrying a write is safe here: updates and
deletes carry preconditions (``resourceVersion``, ``uid``), and a create whose first answer was
lost comes back as ``AlreadyExists``, which the caller checks.

The client's request API changed shape in 37.x (``param_serialize`` and a ``call_api`` that
only sends; before, one ``call_api`` that did both). ``_send`` speaks either, so the package
accepts ``kubernetes>=30,<38`` and shares a venv with clients that need an older one (Katib's
SDK fails from 36.x on); both come back as the urllib3 response, whose body the adapter reads.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client import ApiClient, ApiException

from katib_resume.adapters.k8s.errors import from_status, transport_error
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import ClusterError, Unavailable

Query = Sequence[tuple[str, str]]
_SERIALIZES_FIRST = hasattr(ApiClient, "param_serialize")
"""Whether the installed client is 37.x or later (see the module's docstring)."""
MERGE_PATCH = "application/merge-patch+json"
READS = frozenset({"GET"})


@dataclass(frozen=True, slots=True)
class Call:
    """One request, as sent (and re-sent by a retry)."""

    method: str
    path: str
    body: object
    query: Query
    content_type: str

    @property
    def what(self) -> str:
        return f"{self.method} {self.path}"


@dataclass
class Retry:
    """How often and how patiently a request is retried before ``Unavailable`` is raised."""

    attempts: int = 4
    base: float = 0.2
    cap: float = 5.0
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, error: Unavailable) -> float:
        """Full jitter (AWS' advice): spread retries so a recovering server is not stampeded."""
        ceiling = min(self.cap, self.base * 2.0**attempt)
        jittered = self.rng.uniform(0.0, ceiling)
        return max(jittered, error.retry_after or 0.0)


@dataclass
class RequestCounts:
    """Requests sent, by kind, for the benchmark and ``/metrics``."""

    counts: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, method: str, watch: bool = False) -> None:
        kind = "watch" if watch else ("read" if method in READS else "write")
        with self.lock:
            self.counts[kind] += 1


class Transport:
    def __init__(
        self,
        api: ApiClient,
        *,
        timeout: tuple[float, float] = (5.0, 30.0),
        retry: Retry | None = None,
    ) -> None:
        self.api, self.timeout = api, timeout
        self.retry = retry or Retry()
        self.counts = RequestCounts()

    def request(
        self,
        method: str,
        path: str,
        *,
        body: object = None,
        query: Query = (),
        content_type: str = "application/json",
    ) -> Manifest:
        """The decoded JSON answer of a 2xx; the port's error otherwise (after retries)."""
        call = Call(method, path, body, tuple(query), content_type)
        for attempt in range(self.retry.attempts):
            try:
                return self._once(call)
            except Unavailable as error:
                if attempt + 1 == self.retry.attempts:
                    raise
                self.retry.sleep(self.retry.delay(attempt, error))
        raise AssertionError("unreachable")  # pragma: no cover

    def _once(self, call: Call) -> Manifest:
        what = call.what
        self.counts.add(call.method)
        response = self._send(call, self.timeout)
        try:
            data = response.data  # read now, or as preloaded
        except Exception as error:  # the body was cut off: no answer
            raise transport_error(error, what) from error
        status = response.status
        if not 200 <= status < 300:
            raise from_status(status, data, dict(response.headers or {}), what)
        return _decode(data, what)

    def _send(self, call: Call, timeout: tuple[float, float]) -> Any:
        """The urllib3 response to ``call``, its body unread (a watch streams it)."""
        what = call.what
        headers = {"Accept": "application/json"}
        if call.body is not None:
            headers["Content-Type"] = call.content_type
        try:
            if _SERIALIZES_FIRST:
                return self._send_37(call, headers, timeout).response
            return self._send_before_37(call, headers, timeout)
        except ApiException as error:
            if error.status:
                raise from_status(error.status, error.body, error.headers, what) from error
            raise transport_error(error, what) from error
        except Exception as error:  # urllib3's timeouts, refused and reset connections
            raise transport_error(error, what) from error

    def _send_37(self, call: Call, headers: dict[str, str], timeout: tuple[float, float]) -> Any:
        verb, url, sent_headers, sent_body, _ = self.api.param_serialize(
            call.method,
            call.path,
            query_params=list(call.query),
            header_params=headers,
            body=call.body,
            auth_settings=["BearerToken"],
        )
        return self.api.call_api(verb, url, sent_headers, sent_body, _request_timeout=timeout)

    def _send_before_37(
        self, call: Call, headers: dict[str, str], timeout: tuple[float, float]
    ) -> Any:
        """The one-step ``call_api`` of 30.x to 36.x; it raises ``ApiException`` on a non-2xx."""
        legacy: Any = self.api  # typed against whichever client mypy sees
        return legacy.call_api(
            call.path,
            call.method,
            query_params=list(call.query),
            header_params=headers,
            body=call.body,
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
            _preload_content=False,
            _request_timeout=timeout,
        )

    def stream(self, path: str, query: Query, read_timeout: float) -> Iterator[Manifest]:
        """The events of one watch request, each a decoded JSON line, until the server ends it.

        No retry here: the watch loop above decides whether to resume or list again.
        """
        call = Call("GET", path, None, tuple(query), "")
        what = f"WATCH {path}"
        self.counts.add("GET", watch=True)
        raw = self._send(call, (self.timeout[0], read_timeout))
        try:
            if not 200 <= raw.status < 300:
                data = raw.read()
                raise from_status(raw.status, data, dict(raw.headers or {}), what)
            yield from _lines(raw, what)
        finally:
            raw.release_conn()


def _lines(raw: Any, what: str) -> Iterator[Manifest]:
    buffer = b""
    try:
        for chunk in raw.stream(16 * 1024, decode_content=True):
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            for line in complete:
                if line.strip():
                    yield _decode(line, what)
    except ClusterError:
        raise
    except Exception as error:  # a dropped connection or a read timeout ends the watch
        raise transport_error(error, what) from error
    if buffer.strip():
        yield _decode(buffer, what)


def _decode(data: bytes, what: str) -> Manifest:
    try:
        decoded = json.loads(data or b"{}")
    except ValueError as error:
        raise Unavailable(f"{what}: the server answered with something that is not JSON") from error
    if not isinstance(decoded, dict):
        raise Unavailable(f"{what}: the server answered with JSON that is not an object")
    return decoded
