"""The admission webhook under test: a fake cluster, Katib's shipped katib-config, real TLS.

``world()`` is a ``FakeCluster`` holding the namespace ``kubeflow`` with Katib's injection label;
``review()`` builds an AdmissionReview as the API server sends it; ``TlsWebhook`` runs the real
server on a free port with a certificate from a trustme CA and talks to it over one keep-alive
HTTPS connection, as the API server does.
"""

from __future__ import annotations

import base64
import copy
import http.client
import io
import json
import ssl
from pathlib import Path
from types import TracebackType
from typing import Any

import trustme

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.embedded.runtime import StaticConfig
from katib_resume.app.webhook import Admission, JsonLog, Limits, WebhookServer, create_server
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Cluster, ConfigSource
from tests.support import harness

NAMESPACE = "kubeflow"
INJECTION = {"katib.kubeflow.org/metrics-collector-injection": "enabled"}
TEST_LIMITS = Limits(request_seconds=5.0, io_seconds=2.0, grace_seconds=1.0)
EXPERIMENT_KIND = {"group": "kubeflow.org", "version": "v1beta1", "kind": "Experiment"}


def example(name: str = "from-volume-resume") -> Manifest:
    """A private copy of one of Katib's examples (``tests/data``, the same as ``examples/``)."""
    data: Manifest = harness.load(f"{name}.yaml")
    return data


def namespace(name: str, labels: dict[str, str] | None = None) -> Manifest:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def world() -> FakeCluster:
    cluster = FakeCluster()
    cluster.create(namespace(NAMESPACE, INJECTION))
    return cluster


def shipped_config() -> StaticConfig:
    return StaticConfig(harness.shipped_config())


def default_admission(
    cluster: Cluster | None = None, config: ConfigSource | None = None
) -> Admission:
    return Admission(cluster or world(), config or shipped_config())


def review(
    obj: Manifest | None,
    old: Manifest | None = None,
    *,
    operation: str = "CREATE",
    uid: str = "0df28fbd-5f5f-4f44-8d0b-1a1c3f1e2a10",
) -> Manifest:
    """An AdmissionReview ``admission.k8s.io/v1`` as the API server sends it."""
    meta = (obj or old or {}).get("metadata", {})
    request = {
        "uid": uid,
        "kind": EXPERIMENT_KIND,
        "resource": {"group": "kubeflow.org", "version": "v1beta1", "resource": "experiments"},
        "operation": operation,
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
        "userInfo": {"username": "kubernetes-admin"},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def completed(
    exp: Manifest, reason: str = "ExperimentMaxTrialsReached", trials: int = 12
) -> Manifest:
    """``exp`` as stored after it succeeded (or, with another reason, failed/finished)."""
    done = copy.deepcopy(exp)
    kind = "Failed" if reason == "ExperimentFailed" else "Succeeded"
    done["status"] = {
        "conditions": [{"type": kind, "status": "True", "reason": reason, "message": "done"}],
        "trials": trials,
        "trialsSucceeded": trials,
    }
    return done


def apply_patch(document: Any, patch: list[Manifest]) -> Any:
    """RFC 6902, written here independently of the webhook's differ: every operation it may
    answer (``add``, ``remove``, ``replace``, ``move``, ``copy``; ``test`` too)."""
    document = copy.deepcopy(document)
    for op in patch:
        if op["op"] == "test":
            assert _get(document, op["path"]) == op["value"], f"test failed: {op}"
            continue
        if op["op"] in ("move", "copy"):
            value = copy.deepcopy(_get(document, op["from"]))
            if op["op"] == "move":
                document = _remove(document, op["from"])
            document = _add(document, op["path"], value)
            continue
        if op["op"] in ("remove", "replace"):
            document = _remove(document, op["path"])
        if op["op"] in ("add", "replace"):
            document = _add(document, op["path"], op["value"])
    return document


def _parts(pointer: str) -> list[str]:
    return [_unescape(p) for p in pointer.split("/")[1:]]


def _get(document: Any, pointer: str) -> Any:
    for part in _parts(pointer):
        document = document[int(part)] if isinstance(document, list) else document[part]
    return document


def _parent(document: Any, pointer: str) -> tuple[Any, str]:
    *parents, last = _parts(pointer)
    return _get(document, "".join(f"/{_escape(p)}" for p in parents)), last


def _remove(document: Any, pointer: str) -> Any:
    """``pointer`` removed; the member or item must exist (a ``replace`` of a missing one fails)."""
    if pointer == "":
        return None
    target, last = _parent(document, pointer)
    if isinstance(target, list):
        del target[int(last)]
    else:
        assert last in target, f"remove or replace of a missing member: {pointer}"
        del target[last]
    return document


def _add(document: Any, pointer: str, value: Any) -> Any:
    if pointer == "":
        return value
    target, last = _parent(document, pointer)
    if isinstance(target, list):
        index = len(target) if last == "-" else int(last)
        assert 0 <= index <= len(target), f"index out of range: {pointer}"
        target.insert(index, value)
    else:
        target[last] = value
    return document


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def patch_of(answer: Manifest) -> list[Manifest]:
    response = answer["response"]
    if "patch" not in response:
        return []
    assert response["patchType"] == "JSONPatch"
    ops: list[Manifest] = json.loads(base64.b64decode(response["patch"]))
    return ops


class Certs:
    """A trustme CA and a serving certificate for localhost, written as a TLS Secret mounts it."""

    def __init__(self, cert_dir: Path, ca: trustme.CA | None = None) -> None:
        self.cert_dir = cert_dir
        self.ca = ca or trustme.CA()
        cert_dir.mkdir(parents=True, exist_ok=True)
        self.issue()

    def issue(self) -> trustme.LeafCert:
        leaf = self.ca.issue_cert("localhost", "127.0.0.1")
        (self.cert_dir / "tls.crt").write_bytes(b"".join(p.bytes() for p in leaf.cert_chain_pems))
        (self.cert_dir / "tls.key").write_bytes(leaf.private_key_pem.bytes())
        return leaf

    def client_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context()
        self.ca.configure_trust(context)
        return context


class Client:
    """A keep-alive HTTPS client of a webhook on 127.0.0.1, trusting ``certs``' CA."""

    def __init__(self, certs: Certs, port: int) -> None:
        self.certs, self.port = certs, port
        self.connection = self.connect()

    def connect(self, context: ssl.SSLContext | None = None) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(
            "localhost", self.port, context=context or self.certs.client_context(), timeout=10
        )

    def post(self, path: str, body: Any, content_type: str = "application/json") -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.connection.request("POST", path, data, {"Content-Type": content_type})
        return self.read(self.connection)

    @staticmethod
    def read(connection: http.client.HTTPSConnection) -> tuple[int, Any]:
        response = connection.getresponse()
        return response.status, json.loads(response.read())


class TlsWebhook(Client):
    """The real server on 127.0.0.1 and a client of it; logs kept in ``logs``."""

    def __init__(
        self,
        cert_dir: Path,
        admission: Admission | None = None,
        limits: Limits = TEST_LIMITS,
    ) -> None:
        certs = Certs(cert_dir)
        self.logs = io.StringIO()
        self.server: WebhookServer = create_server(
            admission or default_admission(),
            cert_dir,
            0,
            JsonLog(self.logs),
            host="127.0.0.1",
            limits=limits,
        )
        self.server.start()
        super().__init__(certs, self.server.port)

    def log_events(self) -> list[Manifest]:
        return [json.loads(line) for line in self.logs.getvalue().splitlines()]

    def close(self) -> None:
        self.connection.close()
        self.server.close()

    def __enter__(self) -> TlsWebhook:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


VALIDATE_OK = ("/validate-experiment", review(example()))
"""A request every test server allows: the from-volume example, created in ``kubeflow``."""
