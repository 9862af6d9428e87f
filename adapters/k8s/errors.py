"""The one place where HTTP answers become the cluster port's errors.

Everything above this package sees ``core.ports`` errors only: ``Conflict`` and
``AlreadyExists`` are both 409 and told apart by the Status ``reason``; 410 is ``Gone`` (list
again); 400 and 422 are ``Invalid`` (retrying cannot help); an object the server will not store
for its size is ``TooLarge``: 413 above the API server's request limit (3 MiB), and below it
the 500 in which the API server passes on etcd's "etcdserver: request is too large" (1.5 MiB by
default; kubernetes/kubernetes#112152); throttling, other server errors, timeouts and dropped
connections are ``Unavailable``, carrying the server's ``Retry-After`` when it gave one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from katib_resume.core.ports import (
    AlreadyExists,
    ClusterError,
    Conflict,
    Gone,
    Invalid,
    NotFound,
    TooLarge,
    Unavailable,
)

ETCD_TOO_LARGE = "request is too large"
"""What etcd says of a value above its limit, passed on by the API server as a 500."""

RETRY_AFTER_CAP = 60.0


def status_reason(body: bytes | str | None) -> tuple[str, str]:
    """``(reason, message)`` of a Kubernetes ``Status`` body; empty strings when it is not one."""
    try:
        data = json.loads(body or b"null")
    except (ValueError, TypeError):
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    return str(data.get("reason") or ""), str(data.get("message") or "")


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """The ``Retry-After`` header in seconds (capped), if the server sent a usable one."""
    if not headers:
        return None
    raw = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    try:
        seconds = float(raw) if raw is not None else None
    except ValueError:
        return None
    if seconds is None or seconds < 0:
        return None
    return min(seconds, RETRY_AFTER_CAP)


def from_status(
    code: int, body: bytes | str | None, headers: Mapping[str, str] | None, what: str
) -> ClusterError:
    """The port error for an HTTP answer with status ``code`` to a request about ``what``."""
    reason, message = status_reason(body)
    text = f"{what}: {message or reason or f'HTTP {code}'}"
    if code == 404:
        return NotFound(text)
    if code == 409:
        return AlreadyExists(text) if reason == "AlreadyExists" else Conflict(text)
    if code == 410:
        return Gone(text)
    if code in (400, 422):
        return Invalid(text)
    if code == 413 or (code == 500 and ETCD_TOO_LARGE in message):
        return TooLarge(text)
    error = Unavailable(text)
    error.retry_after = retry_after(headers)
    return error


def transport_error(error: Exception, what: str) -> Unavailable:
    """A request that got no HTTP answer: a timeout, a refused or dropped connection."""
    return Unavailable(f"{what}: {type(error).__name__}: {error}")
