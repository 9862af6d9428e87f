"""``katib-resume webhook`` on the live adapters, against kmock over HTTP.

The stale-volume check must read the API server as it is *now*: a PersistentVolume created a
moment ago denies the Experiment, and deleting it admits it again, with no cache in between.
The pod webhook reads a pod's owners and its Trial the same way.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.k8s.connect import to_url
from katib_resume.adapters.k8s.transport import Transport
from katib_resume.core.ports import AlreadyExists
from tests.support.kube_mock import MockServer, config_map, write_kubeconfig
from tests.support.pod_player import sidecar_flags
from tests.support.pods import job_pod, owner, pod_review
from tests.support.trials import new_trial
from tests.support.waiting import eventually
from tests.support.webhook import (
    INJECTION,
    NAMESPACE,
    Certs,
    Client,
    apply_patch,
    example,
    patch_of,
    review,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "app" / "data"
PV = "from-volume-resume-random-kubeflow"


def put(transport: Transport, path: str, body: Mapping[str, object]) -> None:
    """Create, or leave what an earlier test on this server made."""
    with contextlib.suppress(AlreadyExists):
        transport.request("POST", path, body=body)


@pytest.fixture
def live(kube: MockServer, tmp_path: Path) -> Iterator[tuple[Client, Transport]]:
    transport = to_url(kube.url)
    put(
        transport,
        "/api/v1/namespaces",
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": NAMESPACE, "labels": INJECTION},
        },
    )
    shipped = (DATA / "katib-config.yaml").read_text(encoding="utf-8")
    put(transport, "/api/v1/namespaces/ops/configmaps", config_map("ops", shipped))
    certs = Certs(tmp_path / "certs")
    command = [
        sys.executable, "-m", "katib_resume", "webhook",
        "--cert-dir", str(certs.cert_dir), "--port", "0",
        "--kubeconfig", str(write_kubeconfig(tmp_path, kube.url)),
        "--config-map", "ops/katib-config",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        started = json.loads(process.stderr.readline())
        assert started["event"] == "serving", started
        yield Client(certs, int(started["port"])), transport
    finally:
        process.terminate()
        process.wait(10)


def test_the_stale_volume_check_reads_the_server_live(live: tuple[Client, Transport]) -> None:
    client, transport = live
    status, answer = client.post("/validate-experiment", review(example()))
    assert status == 200 and answer["response"]["allowed"] is True
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": PV}}
    put(transport, "/api/v1/persistentvolumes", volume)
    _, answer = client.post("/validate-experiment", review(example()))
    assert answer["response"]["allowed"] is False
    assert PV in answer["response"]["status"]["message"]
    transport.request("DELETE", f"/api/v1/persistentvolumes/{PV}")
    _, answer = client.post("/validate-experiment", review(example()))
    assert answer["response"]["allowed"] is True


def test_a_missing_config_map_denies_with_its_name_until_it_appears(
    live: tuple[Client, Transport],
) -> None:
    client, transport = live
    transport.request("DELETE", "/api/v1/namespaces/ops/configmaps/katib-config")
    answers: list[Any] = []

    def denied() -> bool:
        answers.append(client.post("/validate-experiment", review(example()))[1])
        return answers[-1]["response"]["allowed"] is False

    eventually(denied, seconds=5.0, what="the watch bringing the ConfigMap's deletion")
    assert answers[-1]["response"]["status"] == {  # Katib's text; the namespace is in our log
        "code": 500,
        "message": 'katib-config is unusable: configmaps "katib-config" not found',
    }


def test_a_trial_pod_gets_katibs_sidecar_through_the_binary(
    live: tuple[Client, Transport],
) -> None:
    """The pod's owners, its Trial, the Experiment and the Suggestion, all read live."""
    client, transport = live
    katib = f"/apis/kubeflow.org/v1beta1/namespaces/{NAMESPACE}"
    for kind, plural in (("Experiment", "experiments"), ("Suggestion", "suggestions")):
        meta = {"name": "exp", "namespace": NAMESPACE}
        body = {"apiVersion": "kubeflow.org/v1beta1", "kind": kind, "metadata": meta}
        put(
            transport,
            f"{katib}/{plural}",
            {**body, "spec": {"algorithm": {"algorithmName": "random"}}},
        )
    trial = new_trial("live-trial", namespace=NAMESPACE)
    del trial["metadata"]["uid"]
    stored = transport.request("POST", f"{katib}/trials", body=trial)
    job = {**trial["spec"]["runSpec"]}
    job["metadata"] = {**job["metadata"], "ownerReferences": [owner(stored)]}
    job = transport.request("POST", f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs", body=job)
    status, answer = client.post("/mutate-pod", pod_review(job_pod(job)))
    assert status == 200 and answer["response"]["allowed"] is True, answer
    patched = apply_patch(job_pod(job), patch_of(answer))
    flags = sidecar_flags(patched)
    assert (flags["-t"], flags["-s-db"]) == ("live-trial", "katib-db-manager.kubeflow:6789")
    transport.request("DELETE", f"{katib}/trials/live-trial")
    _, answer = client.post("/mutate-pod", pod_review(job_pod(job)))
    assert answer["response"]["status"] == {
        "code": 500,
        "message": f'Trial "live-trial" not found in namespace "{NAMESPACE}"',
    }
