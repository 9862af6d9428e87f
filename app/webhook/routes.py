"""One HTTP request in, one reply out: routing and every refusal, with no socket in sight.

The server (``server.py``) reads bytes and writes bytes; everything between is this function, so
that tests (and the fuzz) can drive it directly, thousands of times a second. The rule for what a
client gets back:

* a POST whose body carries a readable ``request.uid`` always gets an AdmissionReview answer
  (HTTP 200): the decision, or a denial saying what is wrong with the request (wrong
  Content-Type, path, apiVersion or kind, a missing object, an object that is not an Experiment
  or not a Pod);
  the API server shows that message to the user;
* otherwise an HTTP error with a one-line JSON message: 400 for a body without a usable uid,
  404 for an unknown path, 405 for a wrong method, 415 for a wrong Content-Type;
* ``GET /healthz``: 200 ``ok``.

An exception escaping the admission code is a bug; it still gets a denial (500, "internal
error"), and the traceback goes to the log, never to the client.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from katib_resume.app.common import wiring
from katib_resume.app.common.logs import JsonLog
from katib_resume.app.webhook.admission import Admission
from katib_resume.app.webhook.review import (
    EXPERIMENT,
    POD,
    Malformed,
    Request,
    decode,
    denied,
    parse_request,
    uid_of,
)
from katib_resume.core.manifest import Manifest

VALIDATE, MUTATE, HEALTHZ = wiring.VALIDATE_PATH, wiring.MUTATE_PATH, wiring.HEALTHZ_PATH
MUTATE_POD = wiring.POD_PATH
ROUTES: dict[str, Callable[[Admission, Request], Manifest]] = {
    VALIDATE: Admission.validate,
    MUTATE: Admission.mutate,
    MUTATE_POD: Admission.mutate_pod,
}
KINDS = {VALIDATE: EXPERIMENT, MUTATE: EXPERIMENT, MUTATE_POD: POD}
"""The ``request.kind`` (group, kind) each path admits."""
JSON = "application/json"


@dataclass(frozen=True, slots=True)
class Incoming:
    """An HTTP request as read off the wire: only what routing and admission look at."""

    method: str
    path: str
    content_type: str | None
    body: bytes


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: Manifest


def status(code: int, message: str) -> Reply:
    """An HTTP error as the API server's own (a ``metav1.Status``), so its logs read it."""
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}
    return Reply(code, {**body, "message": message})


def handle(admission: Admission, log: JsonLog, incoming: Incoming) -> Reply:
    method, content_type, body = incoming.method, incoming.content_type, incoming.body
    route = incoming.path.partition("?")[0]  # the API server appends ?timeout=10s
    if route == HEALTHZ:
        return Reply(200, {"status": "ok"}) if method == "GET" else _wrong_method(method, route)
    if method != "POST":
        return _wrong_method(method, route) if route in ROUTES else _unknown(route)
    started = time.perf_counter()
    try:
        request = _request(route, content_type, body)
        review = ROUTES[route](admission, request)
    except Malformed as error:
        return _malformed(log, route, error, content_type)
    except Exception as error:  # a bug: deny, log the traceback, keep serving
        return _internal_error(log, route, body, error)
    _log_decision(log, route, request, review, started)
    return Reply(200, review)


def _request(route: str, content_type: str | None, body: bytes) -> Request:
    """The review's request; the Content-Type and path are judged once a uid could be read."""
    wrong_type = _content_type_problem(content_type)
    try:
        document = decode(body)
    except Malformed:
        if wrong_type:
            raise Malformed(wrong_type) from None
        raise
    uid = uid_of(document)
    if wrong_type:
        raise Malformed(wrong_type, uid)
    if route not in ROUTES:
        raise Malformed(f"no admission webhook at {route!r}: {_routes()}", uid)
    return parse_request(document, uid, KINDS[route])


def _content_type_problem(content_type: str | None) -> str | None:
    media = (content_type or "").partition(";")[0].strip().lower()
    return None if media == JSON else f"Content-Type must be {JSON}, found {content_type!r}"


def _malformed(log: JsonLog, route: str, error: Malformed, content_type: str | None) -> Reply:
    log.warning("malformed-request", path=route, uid=error.uid, message=str(error))
    if error.uid is not None:
        return Reply(200, denied(error.uid, str(error)))
    if route not in ROUTES:
        return _unknown(route)
    code = 415 if _content_type_problem(content_type) else 400
    return status(code, str(error))


def _internal_error(log: JsonLog, route: str, body: bytes, error: Exception) -> Reply:
    uid = uid_of(_quiet_decode(body))
    trace = traceback.format_exc()
    log.error("internal-error", path=route, uid=uid, error=repr(error), traceback=trace)
    if uid is None:
        return status(500, "internal error; see the webhook's log")
    return Reply(200, denied(uid, "internal error in the admission webhook; see its log", 500))


def _wrong_method(method: str, route: str) -> Reply:
    allowed = "GET" if route == HEALTHZ else "POST"
    return status(405, f"method {method} is not allowed on {route}: use {allowed}")


def _unknown(route: str) -> Reply:
    return status(404, f"nothing at {route!r}: {_routes()}, or GET {HEALTHZ}")


def _routes() -> str:
    return f"POST {VALIDATE}, {MUTATE} or {MUTATE_POD}"


def _quiet_decode(body: bytes) -> object:
    try:
        return decode(body)
    except Malformed:
        return None


def _log_decision(
    log: JsonLog, route: str, request: Request, review: Manifest, started: float
) -> None:
    response = review["response"]
    meta = (request.obj or request.old or {}).get("metadata")
    log.info(
        "admission",
        path=route,
        uid=request.uid,
        operation=request.operation,
        namespace=request.namespace,
        name=meta.get("name") if isinstance(meta, dict) else None,
        allowed=response["allowed"],
        message=response.get("status", {}).get("message"),
        patched="patch" in response,
        ms=round((time.perf_counter() - started) * 1000, 3),
    )
