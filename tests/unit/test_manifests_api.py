"""Every built-in object of the install validates against the official client's models.

The ``kubernetes`` client (37.x) generates pydantic models from the API's OpenAPI schema, with
``extra="forbid"``: a misspelt field, a wrong type or a missing required field fails here, as it
would fail ``kubectl apply``. cert-manager's kinds are not in the client and are checked by the
generator's own tests. Older clients (the dev venv holds one, for Katib's SDK) have plain classes
that check nothing: there the module is skipped, and CI runs it in its newest-client stage.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from kubernetes.client import models

from katib_resume.app.manifests import Options, generate, render

SHIPPED = "apiVersion: config.kubeflow.org/v1beta1\nkind: KatibConfig\n"
MODELS: dict[str, Any] = {
    "CustomResourceDefinition": models.V1CustomResourceDefinition,
    "Namespace": models.V1Namespace,
    "ServiceAccount": models.V1ServiceAccount,
    "ClusterRole": models.V1ClusterRole,
    "ClusterRoleBinding": models.V1ClusterRoleBinding,
    "Role": models.V1Role,
    "RoleBinding": models.V1RoleBinding,
    "ConfigMap": models.V1ConfigMap,
    "StorageClass": models.V1StorageClass,
    "Service": models.V1Service,
    "Deployment": models.V1Deployment,
    "PodDisruptionBudget": models.V1PodDisruptionBudget,
    "ValidatingWebhookConfiguration": models.V1ValidatingWebhookConfiguration,
    "MutatingWebhookConfiguration": models.V1MutatingWebhookConfiguration,
}
NOT_BUILT_IN = {"Issuer", "Certificate"}
pytestmark = pytest.mark.skipif(
    not hasattr(models.V1Namespace, "model_validate"),
    reason="needs kubernetes>=37 (pydantic models); .ci/run runs it with the newest client",
)


def documents(**given: Any) -> list[dict[str, Any]]:
    options = Options(katib_config=SHIPPED, image="i:1", **given)
    return list(yaml.safe_load_all(render(generate(options))))


@pytest.mark.parametrize(
    "given", [{}, {"local_volumes": True, "ca_bundle": "UEVN"}, {"cert_manager": True}]
)
def test_each_built_in_object_validates(given: dict[str, Any]) -> None:
    docs = documents(**given)
    assert {d["kind"] for d in docs} - NOT_BUILT_IN <= MODELS.keys()
    for doc in docs:
        if doc["kind"] not in NOT_BUILT_IN:
            MODELS[doc["kind"]].model_validate(doc)


def test_the_models_do_catch_a_misspelt_field() -> None:
    deployment = next(d for d in documents() if d["kind"] == "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    with pytest.raises(ValueError, match="imagePullPolicyy"):
        models.V1Deployment.model_validate(deployment)
