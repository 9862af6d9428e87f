"""Our webhook in the API server's path on kmock: Experiments are admitted as a cluster does it.

An API server that has our Mutating- and ValidatingWebhookConfiguration calls them on every
CREATE and UPDATE of an Experiment (not of its ``/status``), in that order: the mutating answer's
JSON Patch is applied to the object, the validating one may deny it. kmock calls no webhook, so
``WebhookPath`` plays that part: it starts ``katib-resume webhook`` as a process (its own TLS
certificate, reading kmock live) and ``install``s itself as the mock's ``admission`` hook.

What the API server does and this does too: an update is the stored object with the merge patch
applied and with the stored ``status`` (the main resource cannot write the status subresource);
a denial is answered with the webhook's code and ``admission webhook "<name>" denied the
request: <message>``. JSON Patch updates are passed through unadmitted (no client here sends
them to an Experiment).
"""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp.web
from kmock._internal import enums, rendering
from kmock._internal.dicts import merge_patch_dict

from tests.support.kube_mock import KubeMock, MockServer, write_kubeconfig
from tests.support.webhook import Certs, Client, apply_patch, patch_of, review

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = "validator.experiment.katib-resume.kubeflow.org"
MUTATE, VALIDATE = "/mutate-experiment", "/validate-experiment"


class WebhookPath:
    """``katib-resume webhook`` against ``server``, called for every Experiment write."""

    def __init__(self, server: MockServer, directory: Path, config_map: str) -> None:
        self.server = server
        self.certs = Certs(directory / "certs")
        command = [
            sys.executable, "-m", "katib_resume", "webhook",
            "--cert-dir", str(self.certs.cert_dir), "--port", "0",
            "--kubeconfig", str(write_kubeconfig(directory, server.url)),
            "--config-map", config_map,
        ]  # fmt: skip
        self.process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        started = json.loads(self.process.stderr.readline())
        assert started["event"] == "serving", started
        self.port = int(started["port"])
        self.denials: list[str] = []

    def install(self) -> None:
        def hook(mock: KubeMock) -> None:
            mock.admission = self.admit

        self.server.call(hook)

    def stop(self) -> None:
        self.server.call(lambda mock: setattr(mock, "admission", None))
        self.process.terminate()
        self.process.wait(10)

    async def admit(
        self, mock: KubeMock, request: rendering.Request
    ) -> aiohttp.web.StreamResponse | None:
        """``None`` to go on with ``request`` (its body rewritten to the admitted object), or
        the API server's answer to a denied one."""
        resource: Any = request.resource
        if getattr(resource, "plural", None) != "experiments" or request.subresource is not None:
            return None
        if request.action == enums.action.CREATE and isinstance(request.data, dict):
            old, operation = None, "CREATE"
            new = copy.deepcopy(request.data)
        elif request.action == enums.action.UPDATE and isinstance(request.data, dict):
            old, operation = mock._stored(request), "UPDATE"
            if old is None:
                return None  # kmock answers 404
            patch = {k: v for k, v in request.data.items() if k != "status"}
            new = {**dict(merge_patch_dict(copy.deepcopy(old), patch)), "status": old.get("status")}
        else:
            return None
        admitted = await asyncio.to_thread(self._review, new, old, operation)
        if isinstance(admitted, aiohttp.web.StreamResponse):
            return admitted
        _rewrite(request.data, old, admitted)
        return None

    def _review(
        self, new: Json, old: Json | None, operation: str
    ) -> Json | aiohttp.web.StreamResponse:
        """The object as mutated, or the denial (blocking: run off the mock's loop)."""
        client = Client(self.certs, self.port)  # one connection per call: calls may overlap
        try:
            _, mutated = client.post(MUTATE, review(new, old, operation=operation))
            new = apply_patch(new, patch_of(mutated))
            _, validated = client.post(VALIDATE, review(new, old, operation=operation))
        finally:
            client.connection.close()
        response = validated["response"]
        if response["allowed"]:
            return new
        status = response.get("status") or {}
        message = f'admission webhook "{VALIDATOR}" denied the request: {status.get("message")}'
        self.denials.append(message)
        code = max(int(status.get("code") or 400), 400)
        body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}
        return aiohttp.web.json_response({**body, "message": message}, status=code)


def _rewrite(body: Json, old: Json | None, admitted: Json) -> None:
    """``body`` (a create's object or an update's merge patch) made to yield ``admitted``."""
    wanted = admitted if old is None else _merge_diff(old, admitted)
    if old is not None:
        wanted.pop("status", None)
    body.clear()
    body.update(wanted)


def _merge_diff(old: Json, new: Json) -> Json:
    """The merge patch (RFC 7386) that turns ``old`` into ``new``."""
    diff: Json = {key: None for key in old if key not in new}
    for key, value in new.items():
        before = old.get(key)
        if isinstance(before, dict) and isinstance(value, dict):
            inner = _merge_diff(before, value)
            if inner:
                diff[key] = inner
        elif key not in old or before != value:
            diff[key] = value
    return diff
