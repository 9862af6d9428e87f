"""AdmissionReview ``admission.k8s.io/v1``: reading a request, writing the answer.

What the API server sends is checked here and nowhere else, field by field, so that the
admission code downstream works on a typed ``Request``. A problem becomes ``Malformed`` with a
message naming the field; it carries the request's ``uid`` whenever one could be read, because
the API server matches answers to requests by ``uid``: with it the answer is a denial the server
can show the user, without it only an HTTP 400 is possible.

The uid is looked for first, before anything else is judged, so that even a review with the
wrong ``apiVersion`` or a missing object is denied *by uid* rather than dropped.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from katib_resume.core.katib import GROUP
from katib_resume.core.manifest import Manifest

API_VERSION = "admission.k8s.io/v1"
KIND = "AdmissionReview"
OPERATIONS = frozenset({"CREATE", "UPDATE", "DELETE", "CONNECT"})
JUDGED = frozenset({"CREATE", "UPDATE"})
"""The operations admission decides on, and for which ``request.object`` is required."""
EXPERIMENT_KIND = "Experiment"
EXPERIMENT = (GROUP, EXPERIMENT_KIND)
POD = ("", "Pod")
"""``request.kind`` (group, kind) of the two admitted kinds."""


class Malformed(Exception):
    """The body is not an AdmissionReview we can answer normally; ``uid`` if one was readable."""

    def __init__(self, message: str, uid: str | None = None) -> None:
        super().__init__(message)
        self.uid = uid


@dataclass(frozen=True, slots=True)
class Request:
    """The fields of ``request`` admission reads; ``obj`` and ``old`` are raw objects."""

    uid: str
    operation: str
    namespace: str | None
    obj: Manifest | None
    old: Manifest | None


def decode(body: bytes) -> object:
    """The body as JSON (strict: no ``NaN``), or ``Malformed`` without a uid."""
    try:
        return json.loads(body, parse_constant=_reject_constant)
    except RecursionError:
        raise Malformed("request body is nested too deeply") from None
    except UnicodeDecodeError:
        raise Malformed("request body is not UTF-8") from None
    except ValueError as error:  # JSONDecodeError, huge integers, NaN
        raise Malformed(f"request body is not valid JSON: {error}") from None


def uid_of(document: object) -> str | None:
    """``request.uid`` if it is a non-empty string, whatever else is wrong with the review."""
    raw = document.get("request") if isinstance(document, dict) else None
    uid = raw.get("uid") if isinstance(raw, dict) else None
    return uid if isinstance(uid, str) and uid else None


def parse_request(
    document: object, uid: str | None, expected: tuple[str, str] = EXPERIMENT
) -> Request:
    """The typed request of a decoded review whose uid (if any) was read with ``uid_of``;
    ``expected`` is the ``request.kind`` (group, kind) the path admits."""
    if not isinstance(document, dict):
        raise Malformed(f"expected a JSON object (an {KIND}), found {_json_type(document)}")
    if (document.get("apiVersion"), document.get("kind")) != (API_VERSION, KIND):
        raise Malformed(
            f"expected kind {KIND} (apiVersion {API_VERSION}), found kind "
            f"{_shown(document.get('kind'))} (apiVersion {_shown(document.get('apiVersion'))})",
            uid,
        )
    raw = document.get("request")
    if not isinstance(raw, dict):
        raise Malformed(f"request: expected an object, found {_json_type(raw)}", uid)
    if uid is None:
        raise Malformed("request.uid: expected a non-empty string")
    return _request(raw, uid, expected)


def _request(raw: dict[str, Any], uid: str, expected: tuple[str, str]) -> Request:
    operation = raw.get("operation")
    if not isinstance(operation, str) or operation not in OPERATIONS:
        known = ", ".join(sorted(OPERATIONS))
        found = _shown(operation)
        raise Malformed(f"request.operation: expected one of {known}, found {found}", uid)
    _check_kind(raw.get("kind"), uid, expected)
    namespace = raw.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise Malformed(f"request.namespace: expected a string, found {_json_type(namespace)}", uid)
    obj = _object(raw, "object", uid, required=operation in JUDGED)
    old = _object(raw, "oldObject", uid, required=operation == "UPDATE")
    return Request(uid, operation, namespace or None, obj, old)


def _check_kind(kind: object, uid: str, expected: tuple[str, str]) -> None:
    """``request.kind`` must be the path's kind: a webhook registered too widely must not
    allow (a core Pod's group is the empty string)."""
    if not isinstance(kind, dict):
        raise Malformed(f"request.kind: expected an object, found {_json_type(kind)}", uid)
    group, name = kind.get("group"), kind.get("kind")
    if (group, name) != expected:
        want_group, want_kind = expected
        raise Malformed(
            f"request.kind: this webhook admits {want_kind} ({want_group or 'core'}) only, "
            f"found {_shown(name)} ({_shown(group)})",
            uid,
        )


def _object(raw: dict[str, Any], key: str, uid: str, *, required: bool) -> Manifest | None:
    value = raw.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, dict):
        raise Malformed(f"request.{key}: expected an object, found {_json_type(value)}", uid)
    return value


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "nothing"
    return names.get(type(value), "a number")


def _shown(value: object) -> str:
    """A value in a message: short, one line, whatever the client sent."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 80 else text[:77] + "..."


def allowed(uid: str, patch: list[Manifest] | None = None) -> Manifest:
    response: Manifest = {"uid": uid, "allowed": True}
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode("ascii")
    return _review(response)


def denied(uid: str, message: str, code: int = 400) -> Manifest:
    """A denial as Katib's webhook answers (``admission.Errored``): a status code and message."""
    return _review({"uid": uid, "allowed": False, "status": {"code": code, "message": message}})


def _review(response: Mapping[str, object]) -> Manifest:
    return {"apiVersion": API_VERSION, "kind": KIND, "response": dict(response)}
