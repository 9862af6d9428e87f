"""Desired Deployment, Service and RBAC: Katib's composer scenarios
(docs/katib-contract.md#composer-tests) and ours."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from katib_resume.core.config import ConfigError, KatibConfig, parse_katib_config
from katib_resume.core.config_specs import HostPathConfig, VolumeSpecConfig
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Suggestion
from katib_resume.core.resources import (
    CONTROLLED_KINDS,
    desired_deployment,
    desired_rbac,
    desired_service,
    owner_reference,
    rbac_wanted,
    suggestion_labels,
)
from katib_resume.core.volumes import volume_plan

CONFIG_TEXT = """
apiVersion: config.kubeflow.org/v1beta1
kind: KatibConfig
runtime:
  suggestions:
    - algorithmName: random
      image: test-image
      imagePullPolicy: Always
      resources:
        requests: {cpu: 2m, memory: 3Mi, ephemeral-storage: 4Gi}
        limits: {cpu: 2m, memory: 3Mi, ephemeral-storage: 4Gi}
      serviceAccountName: test-serviceaccount
  earlyStoppings:
    - algorithmName: median-stop
      image: test-image
      imagePullPolicy: Always
      resources:
        requests: {cpu: 2m, memory: 3Mi, ephemeral-storage: 4Gi}
        limits: {cpu: 2m, memory: 3Mi, ephemeral-storage: 4Gi}
"""
RESOURCES = {
    "requests": {"cpu": "2m", "memory": "3Mi", "ephemeral-storage": "4Gi"},
    "limits": {"cpu": "2m", "memory": "3Mi", "ephemeral-storage": "4Gi"},
}
OWNER = {
    "apiVersion": "kubeflow.org/v1beta1",
    "kind": "Suggestion",
    "name": "test-suggestion",
    "uid": "uid-suggestion",
    "controller": True,
    "blockOwnerDeletion": True,
}
DEPLOYMENT_LABELS = {
    "custom-label": "test",
    "katib.kubeflow.org/deployment": "test-suggestion-random",
    "katib.kubeflow.org/experiment": "test-suggestion",
    "katib.kubeflow.org/suggestion": "test-suggestion",
    "sidecar.istio.io/inject": "false",
}
GRPC = {"port": 6789, "service": "manager.v1beta1.Suggestion"}


def make_suggestion(
    policy: str = "FromVolume",
    early_stopping: str | None = "median-stop",
    uid: str | None = "uid-suggestion",
) -> Suggestion:
    spec: dict[str, Any] = {"requests": 1, "algorithm": {"algorithmName": "random"}}
    spec["resumePolicy"] = policy
    if early_stopping is not None:
        spec["earlyStopping"] = {"algorithmName": early_stopping}
    metadata: dict[str, Any] = {
        "name": "test-suggestion",
        "namespace": "kubeflow",
        "labels": {"custom-label": "test"},
        "annotations": {"custom-annotation": "test"},
    }
    if uid is not None:
        metadata["uid"] = uid
    return Suggestion.model_validate({"metadata": metadata, "spec": spec})


SUGGESTION = make_suggestion()


def load(text: str) -> KatibConfig:
    return parse_katib_config(yaml.safe_load(text))


def compose(text: str = CONFIG_TEXT, suggestion: Suggestion = SUGGESTION) -> Manifest:
    """What the planner does: look the entries up, then build the Deployment."""
    katib = load(text)
    stop = suggestion.spec.early_stopping
    early = katib.early_stopping(stop.algorithm_name) if stop else None
    return desired_deployment(
        suggestion, katib.suggestion("random"), early, grpc_probes=katib.grpc_probes
    )


def expected_deployment(
    pull: str = "Always",
    mount_path: str = "/opt/katib/data",
    account: str = "test-serviceaccount",
) -> Manifest:
    suggestion_container = {
        "name": "suggestion",
        "image": "test-image",
        "imagePullPolicy": pull,
        "ports": [{"name": "suggestion-api", "containerPort": 6789}],
        "resources": RESOURCES,
        "readinessProbe": {"grpc": GRPC, "initialDelaySeconds": 10, "periodSeconds": 10},
        "livenessProbe": {
            "grpc": GRPC,
            "initialDelaySeconds": 10,
            "periodSeconds": 120,
            "failureThreshold": 12,
        },
        "volumeMounts": [{"name": "suggestion-volume", "mountPath": mount_path}],
    }
    early_stopping_container = {
        "name": "early-stopping",
        "image": "test-image",
        "imagePullPolicy": pull,
        "ports": [{"name": "earlystop-api", "containerPort": 6788}],
        "resources": RESOURCES,
    }
    pod_spec = {
        "containers": [suggestion_container, early_stopping_container],
        "serviceAccountName": account,
        "volumes": [
            {
                "name": "suggestion-volume",
                "persistentVolumeClaim": {"claimName": "test-suggestion-random"},
            }
        ],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "test-suggestion-random",
            "namespace": "kubeflow",
            "labels": {"custom-label": "test"},
            "annotations": {"custom-annotation": "test"},
            "ownerReferences": [OWNER],
        },
        "spec": {
            "selector": {"matchLabels": DEPLOYMENT_LABELS},
            "template": {
                "metadata": {
                    "labels": DEPLOYMENT_LABELS,
                    "annotations": {"custom-annotation": "test"},
                },
                "spec": pod_spec,
            },
        },
    }


def edit(old: str, new: str) -> Callable[[str], str]:
    return lambda text: text.replace(old, new)


DESIRED_DEPLOYMENT = [
    pytest.param(edit("", ""), expected_deployment(), id="Desired Deployment valid run"),
    pytest.param(
        edit("Always", "invalid"),
        expected_deployment(pull="IfNotPresent"),
        id="Image Pull Policy set to default",
    ),
    pytest.param(
        edit(
            "serviceAccountName: test-serviceaccount",
            "serviceAccountName: test-serviceaccount\n"
            "      volumeMountPath: /custom/container/path",
        ),
        expected_deployment(mount_path="/custom/container/path"),
        id="Suggestion container with custom volume mount path",
    ),
    pytest.param(
        edit("serviceAccountName: test-serviceaccount", 'serviceAccountName: ""'),
        expected_deployment(account="test-suggestion-random"),
        id="Desired Deployment valid run with default serviceAccount",
    ),
]


@pytest.mark.parametrize(("change", "expected"), DESIRED_DEPLOYMENT)
def test_desired_deployment(change: Callable[[str], str], expected: Manifest) -> None:
    assert compose(change(CONFIG_TEXT)) == expected


DESIRED_DEPLOYMENT_ERRORS = [
    pytest.param(
        edit("2m", "invalid"),
        'runtime.suggestions[0].resources.requests.cpu: invalid quantity "invalid"',
        id="Get suggestion config error, invalid CPU limit",
    ),
    pytest.param(
        lambda text: (
            text[: text.rindex("image: test-image")]
            + 'image: ""'
            + text[text.rindex("image: test-image") + len("image: test-image") :]
        ),
        "required value for image configuration of algorithm name: median-stop",
        id="Get early stopping config error, image is missed",
    ),
]


@pytest.mark.parametrize(("change", "message"), DESIRED_DEPLOYMENT_ERRORS)
def test_desired_deployment_errors(change: Callable[[str], str], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        compose(change(CONFIG_TEXT))
    assert message in str(raised.value)


def test_invalid_cpu_limit_is_named_too() -> None:
    text = CONFIG_TEXT.replace("limits: {cpu: 2m", "limits: {cpu: invalid", 1)
    with pytest.raises(ConfigError, match=r"suggestions\[0\]\.resources\.limits\.cpu"):
        compose(text)


def config_with(**fields: Any) -> KatibConfig:
    entry = {"algorithmName": "random", "image": "test-image", **fields}
    return parse_katib_config(
        {
            "apiVersion": "config.kubeflow.org/v1beta1",
            "kind": "KatibConfig",
            "runtime": {
                "suggestions": [entry],
                "earlyStoppings": [{"algorithmName": "median-stop", "image": "stop"}],
            },
        }
    )


def pod_spec(manifest: Manifest) -> Manifest:
    spec: Manifest = manifest["spec"]["template"]["spec"]
    return spec


def test_without_grpc_probes_no_probe_is_added() -> None:
    katib = config_with()
    early = katib.early_stopping("median-stop")
    manifest = desired_deployment(SUGGESTION, katib.suggestion("random"), early, grpc_probes=False)
    container = pod_spec(manifest)["containers"][0]
    assert "readinessProbe" not in container
    assert "livenessProbe" not in container


def test_a_configured_probe_is_kept_and_the_other_one_added() -> None:
    probe = {"httpGet": {"path": "/ready", "port": 8080}}
    katib = config_with(readinessProbe=probe)
    early = katib.early_stopping("median-stop")
    manifest = desired_deployment(SUGGESTION, katib.suggestion("random"), early, grpc_probes=True)
    container = pod_spec(manifest)["containers"][0]
    assert container["readinessProbe"] == probe
    assert container["livenessProbe"]["grpc"] == GRPC


def test_the_configs_own_suggestion_volume_mount_wins() -> None:
    mount = {"name": "suggestion-volume", "mountPath": "/mine", "subPath": "x"}
    katib = config_with(volumeMounts=[mount], name="algo")
    early = katib.early_stopping("median-stop")
    manifest = desired_deployment(SUGGESTION, katib.suggestion("random"), early, grpc_probes=True)
    container = pod_spec(manifest)["containers"][0]
    assert container["volumeMounts"] == [mount]
    assert container["name"] == "algo"


def test_the_suggestion_volume_is_mounted_after_the_configs_own_mounts() -> None:
    own = {"name": "cache", "mountPath": "/cache"}
    katib = config_with(volumeMounts=[own], volumeMountPath="/state")
    early = katib.early_stopping("median-stop")
    manifest = desired_deployment(SUGGESTION, katib.suggestion("random"), early, grpc_probes=True)
    mounts = pod_spec(manifest)["containers"][0]["volumeMounts"]
    assert mounts == [own, {"name": "suggestion-volume", "mountPath": "/state"}]


@pytest.mark.parametrize("policy", ["Never", "LongRunning", ""])
def test_only_from_volume_gets_a_volume(policy: str) -> None:
    suggestion = make_suggestion(policy=policy, early_stopping=None)
    manifest = desired_deployment(
        suggestion, config_with().suggestion("random"), None, grpc_probes=True
    )
    spec = pod_spec(manifest)
    assert "volumes" not in spec
    assert "volumeMounts" not in spec["containers"][0]


@pytest.mark.parametrize("early_stopping", [None, ""])
def test_without_early_stopping(early_stopping: str | None) -> None:
    suggestion = make_suggestion(early_stopping=early_stopping)
    katib = config_with()
    manifest = desired_deployment(suggestion, katib.suggestion("random"), None, grpc_probes=True)
    spec = pod_spec(manifest)
    assert [c["name"] for c in spec["containers"]] == ["suggestion"]
    assert "serviceAccountName" not in spec
    assert not rbac_wanted(suggestion, katib.suggestion("random"))
    ports = desired_service(suggestion)["spec"]["ports"]
    assert ports == [{"name": "suggestion-api", "port": 6789}]


def test_early_stopping_without_its_config_is_a_caller_error() -> None:
    text = "desired_deployment needs the early stopping config of median-stop"
    with pytest.raises(ValueError, match=f"^{text}$"):
        desired_deployment(SUGGESTION, config_with().suggestion("random"), None, grpc_probes=True)


@pytest.mark.parametrize(
    "port", [{"name": "suggestion-api", "containerPort": 1}, {"containerPort": 6789}]
)
def test_a_reserved_port_is_refused_even_without_a_lookup(port: dict[str, Any]) -> None:
    katib = config_with(ports=[port])
    entry = katib.runtime.suggestions[0]
    with pytest.raises(ConfigError, match='a port with name "suggestion-api" or number 6789'):
        desired_deployment(SUGGESTION, entry, None, grpc_probes=True)


def test_other_ports_are_kept_before_the_suggestion_port() -> None:
    katib = config_with(ports=[{"name": "metrics", "containerPort": 9090}])
    manifest = desired_deployment(
        SUGGESTION,
        katib.suggestion("random"),
        katib.early_stopping("median-stop"),
        grpc_probes=True,
    )
    assert pod_spec(manifest)["containers"][0]["ports"] == [
        {"name": "metrics", "containerPort": 9090},
        {"name": "suggestion-api", "containerPort": 6789},
    ]


def test_manifests_are_fresh_on_every_call() -> None:
    first = compose()
    first["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "9"
    first["spec"]["selector"]["matchLabels"]["x"] = "y"
    assert compose() == expected_deployment()


def test_a_preview_owner_reference_has_no_uid() -> None:
    preview = make_suggestion(uid=None)
    reference = owner_reference(preview)
    assert reference == {key: value for key, value in OWNER.items() if key != "uid"}
    assert desired_service(preview)["metadata"]["ownerReferences"] == [reference]


def test_katib_labels_override_the_suggestions_own_in_the_selector_only() -> None:
    data = SUGGESTION.model_dump(by_alias=True)
    data["metadata"]["labels"] = {"katib.kubeflow.org/experiment": "spoof"}
    suggestion = Suggestion.model_validate(data)
    assert suggestion_labels(suggestion)["katib.kubeflow.org/experiment"] == "test-suggestion"
    manifest = compose(suggestion=suggestion)
    assert manifest["metadata"]["labels"] == {"katib.kubeflow.org/experiment": "spoof"}


def test_desired_service() -> None:  # "Desired Service valid run"
    assert desired_service(SUGGESTION) == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "test-suggestion-random",
            "namespace": "kubeflow",
            "ownerReferences": [OWNER],
        },
        "spec": {
            "selector": DEPLOYMENT_LABELS,
            "ports": [
                {"name": "suggestion-api", "port": 6789},
                {"name": "earlystop-api", "port": 6788},
            ],
            "type": "ClusterIP",
        },
    }


def test_desired_rbac() -> None:  # "Desired RBAC valid run"
    metadata = {
        "name": "test-suggestion-random",
        "namespace": "kubeflow",
        "ownerReferences": [OWNER],
    }
    account, role, binding = desired_rbac(SUGGESTION)
    assert account == {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata}
    assert role == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": metadata,
        "rules": [
            {
                "apiGroups": ["kubeflow.org"],
                "resources": ["trials", "trials/status"],
                "verbs": ["*"],
            }
        ],
    }
    assert binding == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": metadata,
        "subjects": [
            {"kind": "ServiceAccount", "name": "test-suggestion-random", "namespace": "kubeflow"}
        ],
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "test-suggestion-random",
        },
    }


def test_rbac_is_wanted_only_for_early_stopping_without_a_configured_account() -> None:
    katib = load(CONFIG_TEXT)
    assert not rbac_wanted(SUGGESTION, katib.suggestion("random"))
    assert rbac_wanted(SUGGESTION, config_with().suggestion("random"))


def test_rbac_manifests_do_not_share_state() -> None:
    first = desired_rbac(SUGGESTION)
    pristine = copy.deepcopy(first)
    first[1]["rules"][0]["verbs"].append("x")
    assert desired_rbac(SUGGESTION) == pristine


def test_the_controller_watches_exactly_katibs_kinds_and_every_child_it_builds() -> None:
    rbac, watched = "rbac.authorization.k8s.io/v1", CONTROLLED_KINDS
    assert watched == (  # owners before what they own: delete's reporting order
        ("kubeflow.org/v1beta1", "Experiment"),
        ("kubeflow.org/v1beta1", "Suggestion"),
        ("kubeflow.org/v1beta1", "Trial"),
        ("apps/v1", "Deployment"),
        ("v1", "Service"),
        ("v1", "ServiceAccount"),
        (rbac, "Role"),
        (rbac, "RoleBinding"),
        ("v1", "PersistentVolumeClaim"),
        ("v1", "PersistentVolume"),
    )
    katib = load(CONFIG_TEXT.replace("serviceAccountName: test-serviceaccount", ""))
    entry = katib.suggestion("random").model_copy(
        update={"persistent_volume_spec": VolumeSpecConfig(host_path=HostPathConfig(path="/d"))}
    )
    plan = volume_plan(SUGGESTION, entry)
    assert plan.volume is not None
    children = [compose(), desired_service(SUGGESTION), *desired_rbac(SUGGESTION)]
    children += [plan.claim.manifest(), plan.volume.manifest()]
    built = [(child["apiVersion"], child["kind"]) for child in children]
    assert built == list(watched[3:])
