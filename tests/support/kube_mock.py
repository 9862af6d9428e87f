"""kmock, filled in where it does not model Kubernetes, and run where the sync client can reach it.

kmock's ``KubernetesEmulator`` stores objects and serves lists, watches and finalizers, but (see
TOOLING-NOTES) it hands out no ``uid``/``resourceVersion``/``creationTimestamp``/``generation``,
never answers 409 to a stale write, answers a create with 200 (the client then returns
``None``), leaves ``kind`` out of lists, ignores label selectors and scans an ever-growing
request log. ``KubeMock`` fills exactly those gaps, so the adapter under test meets a server that
behaves like an API server in the ways the adapter relies on. What it still does not do (garbage
collection, status isolation, 410 on an old watch) the tests inject with ``fail``; an
``admission`` hook puts a webhook in the path (``tests.support.admission_path``).

``MockServer`` runs it on its own event loop in a background thread, because the adapter uses
the blocking client: calling it from the server's loop would deadlock.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp.web
import kmock
from kmock._internal import enums, rendering
from kmock._internal.dicts import merge_patch_dict

Json = dict[str, Any]
LOG_LIMIT = 64
STORED_KINDS = {
    "kubeflow.org/v1beta1/experiments": ("Experiment", True),
    "kubeflow.org/v1beta1/suggestions": ("Suggestion", True),
    "kubeflow.org/v1beta1/trials": ("Trial", True),
    "apps/v1/deployments": ("Deployment", True),
    "v1/services": ("Service", True),
    "v1/persistentvolumeclaims": ("PersistentVolumeClaim", True),
    "v1/persistentvolumes": ("PersistentVolume", False),
    "v1/serviceaccounts": ("ServiceAccount", True),
    "v1/configmaps": ("ConfigMap", True),
    "v1/namespaces": ("Namespace", False),
    "v1/events": ("Event", True),
    "rbac.authorization.k8s.io/v1/roles": ("Role", True),
    "rbac.authorization.k8s.io/v1/rolebindings": ("RoleBinding", True),
    "events.k8s.io/v1/events": ("Event", True),
    "coordination.k8s.io/v1/leases": ("Lease", True),
    "batch/v1/jobs": ("Job", True),
}


@dataclass
class Fault:
    """An answer given instead of the real one to the next ``times`` matching requests."""

    matches: Callable[[rendering.Request], bool]
    status: int
    body: Json = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    apply: bool = False
    """Apply the request before answering with the fault: a lost response."""
    delay: float = 0.0
    """Seconds to wait before answering: a slow server, for timeouts."""


def _status(code: int, reason: str, message: str) -> Json:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }


Admission = Callable[["KubeMock", rendering.Request], Awaitable[aiohttp.web.StreamResponse | None]]


class KubeMock(kmock.KubernetesEmulator):
    """The emulator with identity, versions, conflicts, 201s, typed lists and fault injection."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        for resource, (kind, namespaced) in STORED_KINDS.items():
            self.resources[resource] = kmock.ResourceInfo(kind=kind, namespaced=namespaced)
        self.faults: list[Fault] = []
        self.counter = itertools.count(1)
        self.namespaces: dict[str, Json] = {}
        self.noop_writes = 0
        """Patches that changed nothing but the version: a controller should send none."""
        self.log: list[tuple[str, str]] = []
        """(method, path) of every request, for counting reads and writes."""
        self.admission: Admission | None = None
        """Called on every write that passed the version checks, as the API server calls its
        admission webhooks (``tests.support.admission_path``): an answer to give instead."""

    async def _handle(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        del self._requests[:-LOG_LIMIT]
        self.log.append((str(request.method.value).upper(), request.url.path))
        fault = self._fault_for(request)
        if fault is not None and fault.delay:
            await asyncio.sleep(fault.delay)
        if fault is not None and not fault.apply:
            return aiohttp.web.json_response(fault.body, status=fault.status, headers=fault.headers)
        if request.resource is not None:
            early = self._prepare(request)
            if early is None and self.admission is not None:
                early = await self.admission(self, request)
            if early is not None:
                return early
        response = await super()._handle(request)
        if fault is not None:
            return aiohttp.web.json_response(fault.body, status=fault.status, headers=fault.headers)
        if request.action == enums.action.CREATE and response.status == 200:
            response.set_status(201)
        return response

    async def __call__(self, raw: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        answer = await self._namespace_request(raw)
        return answer if answer is not None else await super().__call__(raw)

    async def _namespace_request(
        self, raw: aiohttp.web.BaseRequest
    ) -> aiohttp.web.StreamResponse | None:
        """Namespaces themselves: kmock reads ``/api/v1/namespaces[/<name>]`` as a namespace
        prefix with no resource and cannot even parse the request, so these are served here."""
        path, prefix = raw.path.rstrip("/"), "/api/v1/namespaces/"
        if path == "/api/v1/namespaces" and raw.method == "POST":
            data = await raw.json()
            if data["metadata"]["name"] in self.namespaces:
                text = f'namespaces "{data["metadata"]["name"]}" already exists'
                return aiohttp.web.json_response(_status(409, "AlreadyExists", text), status=409)
            self._stamp_new(data)
            self.namespaces[data["metadata"]["name"]] = data
            return aiohttp.web.json_response(data, status=201)
        if raw.method == "GET" and path.startswith(prefix) and "/" not in path[len(prefix) :]:
            name = path[len(prefix) :]
            found = self.namespaces.get(name)
            if found is None:
                body = _status(404, "NotFound", f'namespaces "{name}" not found')
                return aiohttp.web.json_response(body, status=404)
            return aiohttp.web.json_response(found)
        return None

    def _fault_for(self, request: rendering.Request) -> Fault | None:
        for fault in self.faults:
            if fault.times > 0 and fault.matches(request):
                fault.times -= 1
                return fault
        return None

    def _prepare(self, request: rendering.Request) -> aiohttp.web.StreamResponse | None:
        """Stamp identity and versions onto writes; refuse stale ones with 409."""
        if request.action == enums.action.CREATE and isinstance(request.data, dict):
            meta = request.data.get("metadata") or {}
            resource: Any = request.resource
            key = (resource, request.namespace or meta.get("namespace"), meta.get("name"))
            objects: Any = self.objects
            if key in objects and not objects[key].deleted:
                text = f'{resource.plural} "{meta.get("name")}" already exists'
                body = _status(409, "AlreadyExists", text)
                return aiohttp.web.json_response(body, status=409)
            self._stamp_new(request.data)
        elif request.action == enums.action.UPDATE and isinstance(request.data, dict):
            return self._check_version(request)
        return None

    def _stamp_new(self, data: Json) -> None:
        meta = data.setdefault("metadata", {})
        if "generateName" in meta and not meta.get("name"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        meta["uid"] = str(uuid.uuid4())
        meta["resourceVersion"] = str(next(self.counter))
        meta["creationTimestamp"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        meta["generation"] = 1

    def _check_version(self, request: rendering.Request) -> aiohttp.web.StreamResponse | None:
        stored = self._stored(request)
        if stored is None:
            return None  # kmock answers 404
        meta = request.data.setdefault("metadata", {})
        wanted = meta.get("resourceVersion")
        held = stored.get("metadata", {}).get("resourceVersion")
        if wanted is not None and wanted != held:
            plural = getattr(request.resource, "plural", "")
            text = (
                f'Operation cannot be fulfilled on {plural} "{request.name}": '
                "the object has been modified; please apply your changes to the latest version "
                "and try again"
            )
            return aiohttp.web.json_response(_status(409, "Conflict", text), status=409)
        if _unchanged(stored, request.data):
            self.noop_writes += 1
        meta["resourceVersion"] = str(next(self.counter))
        if "spec" in request.data and request.subresource is None:
            generation = stored.get("metadata", {}).get("generation", 1)
            meta["generation"] = generation + 1
        return None

    def _stored(self, request: rendering.Request) -> Any:
        key = (request.resource, request.namespace, request.name)
        objects: Any = self.objects
        if key not in objects or objects[key].deleted:
            return None
        return objects[key].raw

    async def _serve_list(self, request: rendering.Request) -> rendering.Payload:
        answer: Any = await super()._serve_list(request)
        resource: Any = request.resource
        kind, _ = STORED_KINDS.get(_name(resource), (None, True))
        labels = _selector(request.params.get("labelSelector", ""))
        answer["items"] = [
            item
            for item in answer["items"]
            if all(item.get("metadata", {}).get("labels", {}).get(k) == v for k, v in labels)
        ]
        answer["kind"] = f"{kind}List" if kind else "List"
        group = f"{resource.group}/" if resource.group else ""
        answer["apiVersion"] = f"{group}{resource.version}"
        answer["metadata"] = {"resourceVersion": str(next(self.counter))}
        payload: rendering.Payload = answer
        return payload

    def stored(self, resource: str, namespace: str | None, name: str) -> Json | None:
        """The stored object, as a plain dict (a copy), or ``None``."""
        for (res, ns, nm), obj in list(self.objects.items()):
            if _name(res) == resource and ns == namespace and nm == name and not obj.deleted:
                return copy.deepcopy(dict(obj.raw))
        return None

    def all(self, resource: str) -> list[Json]:
        return [
            copy.deepcopy(dict(obj.raw))
            for (res, _, _), obj in list(self.objects.items())
            if _name(res) == resource and not obj.deleted
        ]

    def fail(
        self,
        method: str,
        path_part: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        apply: bool = False,
        reason: str = "",
        delay: float = 0.0,
        message: str = "",
    ) -> Fault:
        """Answer the next ``times`` requests of ``method`` whose path contains ``path_part``."""

        def matches(request: rendering.Request) -> bool:
            watching = request.params.get("watch") in {"1", "true"}
            verb = "WATCH" if watching else str(request.method.value).upper()
            return verb == method.upper() and path_part in request.url.path

        text = message or f"injected {status}"
        body = _status(status, reason or _REASONS.get(status, "Failure"), text)
        fault = Fault(matches, status, body, dict(headers or {}), times, apply, delay)
        self.faults.append(fault)
        return fault


_REASONS = {
    404: "NotFound",
    409: "Conflict",
    410: "Expired",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
}


def _unchanged(stored: Any, patch: Json) -> bool:
    """Whether merging ``patch`` into ``stored`` changes nothing but ``resourceVersion``."""
    body = copy.deepcopy(patch)
    body.get("metadata", {}).pop("resourceVersion", None)
    before = copy.deepcopy(dict(stored))
    after = merge_patch_dict(before, body)
    return dict(after) == before


def _name(resource: Any) -> str:
    """``group/version/plural`` (``version/plural`` for the core group), as STORED_KINDS has it."""
    group = f"{resource.group}/" if resource.group else ""
    return f"{group}{resource.version}/{resource.plural}"


def _selector(text: str) -> list[tuple[str, str]]:
    pairs = []
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        pairs.append((key.strip(), value.strip().lstrip("=")))
    return pairs


class MockServer:
    """``KubeMock`` served over HTTP from a background thread with its own event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.stopping: asyncio.Event | None = None
        self.mock: KubeMock | None = None
        self.url = ""
        self.thread = threading.Thread(target=self._run, name="kube-mock", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self.stopping = asyncio.Event()
        async with KubeMock() as mock, kmock.Server(mock) as server:
            self.mock = mock
            self.url = str(server.url).rstrip("/")
            self.ready.set()
            await self.stopping.wait()
            # open watch streams would hold the server's shutdown until they time out
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

    def start(self) -> MockServer:
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("the mock API server did not start")
        return self

    def stop(self) -> None:
        if self.stopping is not None:
            self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(10)

    def call(self, fn: Callable[[KubeMock], Any]) -> Any:
        """Run ``fn(mock)`` on the server's loop (the mock is not thread-safe)."""
        assert self.mock is not None

        async def run() -> Any:
            return fn(self.mock)  # type: ignore[arg-type]

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)


def config_map(namespace: str, text: str, name: str = "katib-config") -> Json:
    """A katib-config ConfigMap holding ``text`` under Katib's key ``katib-config.yaml``."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"katib-config.yaml": text},
    }


def write_kubeconfig(directory: Path, url: str) -> Path:
    """A kubeconfig for ``url`` with no credentials, as a process under test would be given."""
    path = directory / "kubeconfig"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "mock", "cluster": {"server": url}}],
        "users": [{"name": "me", "user": {}}],
        "contexts": [{"name": "mock", "context": {"cluster": "mock", "user": "me"}}],
        "current-context": "mock",
    }
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@contextmanager
def mock_server() -> Iterator[MockServer]:
    server = MockServer().start()
    try:
        yield server
    finally:
        server.stop()
