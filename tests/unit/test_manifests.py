"""The install manifests: parseable, consistent, complete, and valid for the Kubernetes API."""

from __future__ import annotations

import base64
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.app.manifests import Options, generate, render
from katib_resume.app.manifests import names as n
from katib_resume.app.manifests.crds import FILES, with_status_subresource
from katib_resume.core.config import parse_katib_config

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SHIPPED = (ROOT / "app" / "data" / "katib-config.yaml").read_text()
IMAGE = "registry.example/katib-resume:1.2.3"
CONFIGS = [
    {},
    {"namespace": "team-ops", "image": IMAGE},
    {"local_volumes": True, "ca_bundle": "UEVN"},
    {"namespace": "x", "cert_manager": True, "local_volumes": True},
]


def options(**given: Any) -> Options:
    return Options(**({"katib_config": SHIPPED, "image": "katib-resume:0.1.0"} | given))


def stream(**given: Any) -> list[dict[str, Any]]:
    """The documents as a user gets them: rendered to text and parsed back."""
    return [doc for doc in yaml.safe_load_all(render(generate(options(**given))))]


def find(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    assert len(found) == 1, f"{kind} {name}: {len(found)} found"
    return found[0]


def containers(docs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for doc in docs:
        if doc["kind"] == "Deployment":
            yield from doc["spec"]["template"]["spec"]["containers"]


@pytest.mark.parametrize("given", CONFIGS)
def test_every_document_is_a_named_object_once(given: dict[str, Any]) -> None:
    docs = stream(**given)
    for doc in docs:
        assert doc["apiVersion"] and doc["kind"] and doc["metadata"]["name"]
    keys = [(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in docs]
    assert len(keys) == len(set(keys))


def test_crds_are_katibs_with_a_status_subresource() -> None:
    crds = [d for d in stream() if d["kind"] == "CustomResourceDefinition"]
    assert [c["metadata"]["name"] for c in crds] == [
        f"{kind}.kubeflow.org" for kind in ("experiments", "suggestions", "trials")
    ]
    for crd, name in zip(crds, FILES, strict=True):
        assert (ROOT / "app" / "data" / name).read_bytes() == (DATA / name).read_bytes()
        assert crd == yaml.safe_load((DATA / name).read_text())
        assert all(v["subresources"]["status"] == {} for v in crd["spec"]["versions"])


def test_a_missing_status_subresource_is_added_and_the_rest_kept() -> None:
    crd = yaml.safe_load((DATA / "crd-trial.yaml").read_text())
    del crd["spec"]["versions"][0]["subresources"]
    fixed = with_status_subresource(crd)
    assert fixed["spec"]["versions"][0]["subresources"] == {"status": {}}
    assert "subresources" not in crd["spec"]["versions"][0]
    assert with_status_subresource(fixed) == fixed


@pytest.mark.parametrize("given", CONFIGS)
def test_namespace_and_image_are_applied_everywhere(given: dict[str, Any]) -> None:
    docs = stream(**given)
    namespace, image = given.get("namespace", "kubeflow"), given.get("image", "katib-resume:0.1.0")
    assert find(docs, "Namespace")["metadata"]["name"] == namespace
    assert set(_values_of(docs, "namespace")) == {namespace}
    assert {c["image"] for c in containers(docs)} == {image}
    for container in containers(docs):
        assert f"{namespace}/katib-config" in container["args"]
    assert find(docs, "ConfigMap", "katib-config")["metadata"]["namespace"] == namespace


def test_the_webhook_service_deployment_and_configurations_agree() -> None:
    docs = stream(namespace="team-ops")
    service = find(docs, "Service", n.WEBHOOK)
    pod = find(docs, "Deployment", n.WEBHOOK)["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    container = pod["spec"]["containers"][0]
    [target] = [
        p for p in container["ports"] if p["name"] == service["spec"]["ports"][0]["targetPort"]
    ]
    assert str(target["containerPort"]) == container["args"][container["args"].index("--port") + 1]
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == n.CERT_DIR)
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
    assert volume["secret"]["secretName"] == n.WEBHOOK_SECRET
    assert container["args"][container["args"].index("--cert-dir") + 1] == n.CERT_DIR
    for kind, path in [
        ("ValidatingWebhookConfiguration", "/validate-experiment"),
        ("MutatingWebhookConfiguration", "/mutate-experiment"),
    ]:
        [hook] = find(docs, kind, n.WEBHOOK_CONFIGURATION)["webhooks"]
        assert hook["clientConfig"]["service"] == {
            "name": service["metadata"]["name"],
            "namespace": service["metadata"]["namespace"],
            "path": path,
            "port": service["spec"]["ports"][0]["port"],
        }


@pytest.mark.parametrize("kind", ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"])
def test_admission_fails_closed_on_experiments_and_skips_the_install_namespace(kind: str) -> None:
    [hook] = find(stream(namespace="team-ops"), kind, n.WEBHOOK_CONFIGURATION)["webhooks"]
    assert hook["rules"] == [
        {
            "apiGroups": ["kubeflow.org"],
            "apiVersions": ["v1beta1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["experiments"],
            "scope": "Namespaced",
        }
    ]
    assert (hook["failurePolicy"], hook["sideEffects"], hook["timeoutSeconds"]) == (
        "Fail",
        "None",
        10,
    )
    assert hook["admissionReviewVersions"] == ["v1"]
    assert hook["namespaceSelector"] == {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["team-ops"]}
        ]
    }


def test_controller_runs_two_replicas_under_leader_election_hardened() -> None:
    deployment = find(stream(), "Deployment", n.CONTROLLER)
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert deployment["spec"]["replicas"] == 2
    assert container["args"][0] == "controller" and "--leader-elect" in container["args"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"metrics": 8080, "health": 18080}
    assert container["args"][container["args"].index("--health-addr") + 1] == ":18080"
    assert container["args"][container["args"].index("--metrics-addr") + 1] == ":8080"
    assert container["livenessProbe"]["httpGet"] == {
        "path": "/healthz",
        "port": "health",
        "scheme": "HTTP",
    }
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]
    assert pod["serviceAccountName"] == n.CONTROLLER


def test_certificates_by_ca_bundle_or_cert_manager() -> None:
    pem = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
    bundle = base64.b64encode(pem.encode()).decode()
    for hook in _hooks(stream(ca_bundle=bundle)):
        assert base64.b64decode(hook["clientConfig"]["caBundle"]).decode() == pem
    docs = stream(namespace="ns1", cert_manager=True)
    certificate = find(docs, "Certificate", n.WEBHOOK)
    assert certificate["spec"]["secretName"] == n.WEBHOOK_SECRET
    assert "katib-resume-webhook.ns1.svc" in certificate["spec"]["dnsNames"]
    issuer = find(docs, "Issuer")
    assert certificate["spec"]["issuerRef"] == {
        "kind": "Issuer",
        "name": issuer["metadata"]["name"],
    }
    for kind, name in (
        ("ValidatingWebhookConfiguration", n.WEBHOOK_CONFIGURATION),
        ("MutatingWebhookConfiguration", n.WEBHOOK_CONFIGURATION),
        ("MutatingWebhookConfiguration", n.POD_WEBHOOK_CONFIGURATION),
    ):
        annotations = find(docs, kind, name)["metadata"]["annotations"]
        assert annotations == {"cert-manager.io/inject-ca-from": f"ns1/{n.WEBHOOK}"}
    assert all("caBundle" not in hook["clientConfig"] for hook in _hooks(docs))


def test_local_volumes_add_exactly_the_storage_class_and_the_config_change() -> None:
    plain, local = stream(), stream(local_volumes=True)
    storage = find(local, "StorageClass", "katib-suggestion")
    assert storage["provisioner"] == "kubernetes.io/no-provisioner"
    assert storage["volumeBindingMode"] == "WaitForFirstConsumer"
    others = [d for d in local if d is not storage]
    changed = [(a, b) for a, b in zip(plain, others, strict=True) if a != b]
    assert [(a["kind"], a["metadata"]["name"]) for a, _ in changed] == [
        ("ConfigMap", "katib-config")
    ]
    before, after = (_katib_config(doc) for doc in changed[0])
    for entry in before["runtime"]["suggestions"]:
        claim = entry.setdefault("persistentVolumeClaimSpec", {})
        claim["storageClassName"] = "katib-suggestion"
    assert after == before
    parsed = parse_katib_config(after)
    assert parsed.suggestion("pbt").persistent_volume_claim_spec.access_modes == ("ReadWriteMany",)


def test_local_volume_prefix_and_a_chosen_storage_class_kept() -> None:
    config = yaml.safe_load(SHIPPED)
    config["runtime"]["suggestions"][0]["persistentVolumeClaimSpec"] = {"storageClassName": "fast"}
    docs = stream(
        katib_config=yaml.safe_dump(config), local_volumes=True, local_volume_path_prefix="/srv/k"
    )
    entries = _katib_config(find(docs, "ConfigMap"))["runtime"]["suggestions"]
    assert entries[0]["persistentVolumeClaimSpec"] == {"storageClassName": "fast"}
    assert "localVolumePathPrefix" not in entries[0]
    assert all(e["localVolumePathPrefix"] == "/srv/k" for e in entries[1:])


def test_without_local_volumes_the_katib_config_text_ships_unchanged() -> None:
    assert find(stream(), "ConfigMap")["data"] == {"katib-config.yaml": SHIPPED}


def _katib_config(config_map: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(config_map["data"]["katib-config.yaml"])
    return data


def _hooks(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        hook
        for doc in docs
        if doc["kind"].endswith("WebhookConfiguration")
        for hook in doc["webhooks"]
    ]


def _values_of(node: object, key: str) -> Iterator[object]:
    """Every value of ``key`` anywhere in ``node`` (the namespace fields of all objects)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key and isinstance(v, str):
                yield v
            yield from _values_of(v, key)
    elif isinstance(node, list):
        yield from itertools.chain.from_iterable(_values_of(item, key) for item in node)
    if isinstance(node, dict) and "namespaceSelector" in node:
        [expression] = node["namespaceSelector"]["matchExpressions"]
        yield from expression["values"]
