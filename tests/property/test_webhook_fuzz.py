"""Fuzzing the admission webhook with malformed and adversarial AdmissionReviews.

Whatever arrives, the webhook answers: an AdmissionReview that echoes the request's ``uid``
whenever the body carries one (a denial saying what is wrong, or the decision), otherwise an
HTTP error with a message; never an internal error, never an exception. Where it allows with a
patch, the patch applies to the object exactly as sent and yields Katib's defaulted Experiment.

Most examples call ``routes.handle`` directly (the whole decision, no sockets); a few thousand go
over real TLS on one keep-alive connection. Each test counts the examples it ran, so the CI run
provably sends at least ``REQUIRED_DIRECT + REQUIRED_TLS`` (over 10,000) requests.
"""

from __future__ import annotations

import base64
import copy
import io
import json
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from katib_resume.app.webhook import (
    MUTATE,
    MUTATE_POD,
    VALIDATE,
    Admission,
    Incoming,
    JsonLog,
    Reply,
    handle,
)
from katib_resume.core.defaults import default_experiment
from katib_resume.core.model import Experiment
from tests.support.documents import paths
from tests.support.webhook import (
    NAMESPACE,
    TlsWebhook,
    apply_patch,
    completed,
    default_admission,
    example,
    review,
)

REQUIRED_DIRECT = 9_000
REQUIRED_TLS = 2_000
ADMISSION_PATHS = (VALIDATE, MUTATE)


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
NASTY: list[Any] = [
    "",
    "\x00",
    "\ud800",  # a lone surrogate: valid in JSON text, not encodable as UTF-8
    "a" * 100_000,
    "-",
    "Experiment",
    "kubeflow.org/v1beta1",
    "admission.k8s.io/v1beta1",
    "FromVolume",
    "CREATE",
    10**40,
    -(2**63),
    1e308,
    -0.0,
    [],
    {},
    [[[[[[[[[[[]]]]]]]]]]],
    {"uid": "nested"},
]
values = st.one_of(json_values, st.sampled_from(NASTY).map(copy.deepcopy))  # never shared


def bases() -> list[dict[str, Any]]:
    """Well-formed reviews of every shape the API server sends; the fuzz breaks them."""
    from_volume, long_running = example(), example("long-running-resume")
    stored = completed(default_experiment(Experiment.model_validate(from_volume)).to_dict())
    raised = copy.deepcopy(stored)
    raised["spec"]["maxTrialCount"] = 20
    return [
        review(from_volume),
        review(long_running),
        review(raised, stored, operation="UPDATE"),
        review(None, stored, operation="DELETE"),
    ]


BASES = bases()


BASE_PATHS = [paths(base) for base in BASES]


@st.composite
def reviews(draw: st.DrawFn) -> Any:
    """A well-formed review with one to three nodes replaced, deleted or given a stray key."""
    index = draw(st.integers(0, len(BASES) - 1))
    return broken(draw, BASES[index], BASE_PATHS[index])


def broken(draw: st.DrawFn, base: Any, base_paths: list[tuple[Any, ...]]) -> Any:
    """A copy of ``base`` with one to three of its nodes replaced, deleted or given a stray key."""
    document = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(base_paths))
        parent = _walk(document, path[:-1])
        if parent is None:
            continue
        action = draw(st.sampled_from(["replace", "replace", "delete", "stray"]))
        key = path[-1]
        if isinstance(parent, dict) and action == "delete":
            parent.pop(key, None)
        elif isinstance(parent, dict) and action == "stray":
            parent[draw(st.text(max_size=8))] = draw(values)
        elif isinstance(parent, dict) or (isinstance(key, int) and key < len(parent)):
            parent[key] = draw(values)
    return document


def _walk(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        present = part in node if isinstance(node, dict) else _has_index(node, part)
        if not present:
            return None
        node = node[part]
    return node if isinstance(node, dict | list) else None


def _has_index(node: Any, part: Any) -> bool:
    return isinstance(node, list) and isinstance(part, int) and part < len(node)


def encode(document: Any) -> bytes:
    return json.dumps(document).encode()


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """Bodies: broken reviews, arbitrary JSON, cut-off JSON, bytes that are not JSON at all."""
    kind = draw(st.sampled_from(["review"] * 6 + ["json", "truncated", "bytes", "deep", "number"]))
    if kind == "review":
        return encode(draw(reviews()))
    if kind == "json":
        return encode(draw(json_values))
    if kind == "truncated":
        whole = encode(draw(reviews()))
        return whole[: draw(st.integers(0, len(whole)))]
    if kind == "deep":
        depth = draw(st.integers(1, 100_000))
        return b"[" * depth + b"]" * depth
    if kind == "number":
        return b'{"request": {"uid": "n"}, "apiVersion": ' + b"9" * 5000 + b"}"
    return draw(st.binary(max_size=64))


content_types = st.sampled_from(
    ["application/json"] * 6
    + ["application/json; charset=utf-8", "APPLICATION/JSON", "text/plain", "", None]
)
methods = st.sampled_from(["POST"] * 8 + ["GET", "PUT", "DELETE"])
routes = st.sampled_from(
    [VALIDATE, MUTATE] * 4
    + [MUTATE_POD, f"{VALIDATE}?timeout=10s", "/healthz", "/", "/validate-pod"]
)


def expected_uid(body: bytes) -> str | None:
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    request = document.get("request") if isinstance(document, dict) else None
    uid = request.get("uid") if isinstance(request, dict) else None
    return uid if isinstance(uid, str) and uid else None


def check(incoming: Incoming, status: int, body: Any, log: str) -> None:
    """The contract, whatever ``incoming`` was."""
    assert "internal-error" not in log, log
    json.dumps(body, allow_nan=False)
    route = incoming.path.partition("?")[0]
    uid = expected_uid(incoming.body)
    if incoming.method == "POST" and uid is not None and route != "/healthz":
        assert status == 200, (status, body)
        response = body["response"]
        assert response["uid"] == uid
        assert isinstance(response["allowed"], bool)
        if response["allowed"]:
            check_patch(incoming, response)
        else:
            assert isinstance(response["status"]["message"], str) and response["status"]["message"]
    elif route == "/healthz" and incoming.method == "GET":
        assert status == 200
    else:
        assert status in (400, 404, 405, 411, 413, 415), (status, body)
        assert body["message"]


def check_patch(incoming: Incoming, response: dict[str, Any]) -> None:
    """An allowed mutation's patch applies to the object as sent and gives Katib's defaults."""
    if "patch" not in response:
        return
    ops = json.loads(base64.b64decode(response["patch"]))
    request = json.loads(incoming.body)["request"]
    sent = request["object"]
    if incoming.path.startswith(MUTATE_POD):
        check_pod_patch(sent, apply_patch(sent, ops))
        return
    assert incoming.path.startswith(MUTATE)
    if not sent.get("metadata", {}).get("namespace") and request.get("namespace"):
        sent["metadata"]["namespace"] = request["namespace"]
    patched = apply_patch(sent, ops)
    expected = default_experiment(Experiment.model_validate(sent)).to_dict()
    assert Experiment.model_validate(patched).to_dict() == expected


def check_pod_patch(sent: Any, patched: Any) -> None:
    """The pod webhook only adds: the pod's containers stay, first and in order, and the Trial's
    label is set."""
    names = [c["name"] for c in sent["spec"]["containers"]]
    assert [c["name"] for c in patched["spec"]["containers"]][: len(names)] == names
    assert patched["metadata"]["labels"]["katib.kubeflow.org/trial"]


def run_direct(incoming: Incoming, admission: Admission | None = None) -> Reply:
    sink = io.StringIO()
    reply: Reply = handle(admission or ADMISSION, JsonLog(sink), incoming)
    check(incoming, reply.status, reply.body, sink.getvalue())
    return reply


ADMISSION = default_admission()


def test_broken_reviews_are_answered_by_uid() -> None:
    count: list[int] = []

    @fuzz_settings(6_000)
    @given(reviews(), st.sampled_from(ADMISSION_PATHS))
    def fuzz(document: Any, path: str) -> None:
        count.append(1)
        run_direct(Incoming("POST", path, "application/json", encode(document)))

    fuzz()
    assert len(count) >= 6_000


def test_any_request_gets_an_answer() -> None:
    count: list[int] = []

    @fuzz_settings(REQUIRED_DIRECT - 6_000)
    @given(methods, routes, content_types, bodies())
    def fuzz(method: str, path: str, content_type: str | None, body: bytes) -> None:
        count.append(1)
        run_direct(Incoming(method, path, content_type, body))

    fuzz()
    assert len(count) >= REQUIRED_DIRECT - 6_000


def test_over_tls_on_one_keep_alive_connection(tmp_path: Path) -> None:
    count: list[int] = []
    with TlsWebhook(tmp_path) as webhook:
        started = time.perf_counter()

        @fuzz_settings(REQUIRED_TLS)
        @given(st.sampled_from(["POST"] * 9 + ["GET"]), routes, content_types, bodies())
        def fuzz(method: str, path: str, content_type: str | None, body: bytes) -> None:
            count.append(1)
            headers = {"Content-Type": content_type} if content_type is not None else {}
            webhook.connection.request(method, path, body, headers)
            status, answer = webhook.read(webhook.connection)
            check(Incoming(method, path, content_type, body), status, answer, "")

        fuzz()
        elapsed = time.perf_counter() - started
        assert "internal-error" not in {e["event"] for e in webhook.log_events()}
    assert len(count) >= REQUIRED_TLS
    print(f"{len(count)} requests over TLS in {elapsed:.1f} s")


def test_namespace_is_what_the_fuzz_uses() -> None:
    assert BASES[0]["request"]["namespace"] == NAMESPACE
