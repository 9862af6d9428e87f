"""The katib-config model: Katib's defaulting (docs/katib-contract.md#katib-config,
docs/katib-contract.md#config-tests), lookups and their errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.core.config import ConfigError, KatibConfig, SuggestionConfig, parse_katib_config

SHARED_CONFIG = Path(__file__).parents[1] / "data" / "katib-config.yaml"
HEAD = {"apiVersion": "config.kubeflow.org/v1beta1", "kind": "KatibConfig"}
DEFAULT_RESOURCES = {
    "requests": {"cpu": "50m", "memory": "10Mi", "ephemeral-storage": "500Mi"},
    "limits": {"cpu": "500m", "memory": "100Mi", "ephemeral-storage": "5Gi"},
}
DEFAULT_CLAIM = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
CUSTOM_RESOURCES = {
    "requests": {"cpu": "2m", "memory": "3Mi", "ephemeral-storage": "4Gi"},
    "limits": {"cpu": "2m", "memory": "3Mi", "ephemeral-storage": "4Gi"},
}


def config(*suggestions: dict[str, Any], **runtime: Any) -> KatibConfig:
    return parse_katib_config({**HEAD, "runtime": {"suggestions": list(suggestions), **runtime}})


def entry(**fields: Any) -> dict[str, Any]:
    return {"algorithmName": "random", "image": "test-image", **fields}


def summary(suggestion: SuggestionConfig) -> dict[str, Any]:
    """The defaulted fields of an entry as Kubernetes JSON."""
    return {
        "imagePullPolicy": suggestion.image_pull_policy,
        "resources": suggestion.resources.model_dump(mode="json", by_alias=True),
        "volumeMountPath": suggestion.volume_mount_path,
        "persistentVolumeClaimSpec": suggestion.persistent_volume_claim_spec.spec(),
        "persistentVolumeSpec": suggestion.persistent_volume_spec.spec(),
    }


def defaulted(**changes: Any) -> dict[str, Any]:
    expected: dict[str, Any] = {
        "imagePullPolicy": "IfNotPresent",
        "resources": DEFAULT_RESOURCES,
        "volumeMountPath": "/opt/katib/data",
        "persistentVolumeClaimSpec": DEFAULT_CLAIM,
        "persistentVolumeSpec": {},
    }
    return expected | changes


CUSTOM_PV = {"storageClassName": "fast", "hostPath": {"path": "/data"}}
SET_SUGGESTION_CONFIGS = [
    pytest.param(
        entry(
            imagePullPolicy="Always",
            resources=CUSTOM_RESOURCES,
            volumeMountPath="/custom",
            persistentVolumeClaimSpec={**DEFAULT_CLAIM, "accessModes": ["ReadWriteMany"]},
            persistentVolumeSpec=CUSTOM_PV,
        ),
        defaulted(
            imagePullPolicy="Always",
            resources=CUSTOM_RESOURCES,
            volumeMountPath="/custom",
            persistentVolumeClaimSpec={**DEFAULT_CLAIM, "accessModes": ["ReadWriteMany"]},
            persistentVolumeSpec={**CUSTOM_PV, "persistentVolumeReclaimPolicy": "Delete"},
        ),
        id="All parameters correctly are specified",
    ),
    pytest.param(
        entry(),
        defaulted(),
        id="GetSuggestionConfigData sets IfNotPresent to imagePullPolicy",
    ),
    pytest.param(
        entry(imagePullPolicy="invalid"),
        defaulted(),
        id="GetSuggestionConfigData sets IfNotPresent for an unknown imagePullPolicy",
    ),
    pytest.param(
        entry(resources={}),
        defaulted(),
        id="GetSuggestionConfigData sets resource.requests and resource.limits for the "
        "suggestion service",
    ),
    pytest.param(
        entry(volumeMountPath=""),
        defaulted(),
        id="GetSuggestionConfigData sets /opt/katib/data to volumeMountPath",
    ),
    pytest.param(
        entry(persistentVolumeClaimSpec={"storageClassName": "x"}),
        defaulted(persistentVolumeClaimSpec={**DEFAULT_CLAIM, "storageClassName": "x"}),
        id="GetSuggestionConfigData sets accessMode and resource.requests for PVC",
    ),
    pytest.param(
        entry(persistentVolumeSpec={}),
        defaulted(persistentVolumeSpec={}),
        id="GetSuggestionConfigData does not set Delete to persistentVolumeReclaimPolicy",
    ),
]


@pytest.mark.parametrize(("given", "expected"), SET_SUGGESTION_CONFIGS)
def test_set_suggestion_configs(given: dict[str, Any], expected: dict[str, Any]) -> None:
    assert summary(config(given).suggestion("random")) == expected


def test_pv_reclaim_policy_is_forced_to_delete() -> None:
    pv = {**CUSTOM_PV, "persistentVolumeReclaimPolicy": "Retain"}
    found = config(entry(persistentVolumeSpec=pv)).suggestion("random")
    assert found.persistent_volume_spec.spec()["persistentVolumeReclaimPolicy"] == "Delete"


def test_resource_defaults_zero_takes_default_negative_deletes_others_kept() -> None:
    resources = {
        "requests": {"cpu": "0", "memory": "-1", "nvidia.com/gpu": "1"},
        "limits": {"cpu": "-1", "memory": "-1", "ephemeral-storage": "-1"},
    }
    found = config(entry(resources=resources)).suggestion("random")
    assert found.resources.model_dump(mode="json", by_alias=True) == {
        "requests": {"cpu": "50m", "nvidia.com/gpu": "1", "ephemeral-storage": "500Mi"}
    }


GET_SUGGESTION_CONFIG_ERRORS = [
    pytest.param(
        config(),
        "failed to find suggestion config for algorithm: random in ConfigMap: katib-config",
        id="no runtime.suggestions",
    ),
    pytest.param(
        config(entry(algorithmName="tpe")),
        "failed to find suggestion config for algorithm: random in ConfigMap: katib-config",
        id="unknown algorithm",
    ),
    pytest.param(
        config(entry(image="")),
        "required value for image configuration of algorithm name: random",
        id="empty image",
    ),
    pytest.param(
        config(entry(image="  ")),
        "required value for image configuration of algorithm name: random",
        id="blank image",
    ),
    pytest.param(
        config({"algorithmName": "random"}),
        "required value for image configuration of algorithm name: random",
        id="no image",
    ),
    pytest.param(
        config(entry(ports=[{"name": "suggestion-api", "containerPort": 7000}])),
        'invalid suggestion config: a port with name "suggestion-api" or number 6789 '
        "must not be specified",
        id="reserved port name",
    ),
    pytest.param(
        config(entry(ports=[{"name": "other", "containerPort": 6789}])),
        'invalid suggestion config: a port with name "suggestion-api" or number 6789 '
        "must not be specified",
        id="reserved port number",
    ),
]


@pytest.mark.parametrize(("katib", "message"), GET_SUGGESTION_CONFIG_ERRORS)
def test_get_suggestion_config_errors(katib: KatibConfig, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        katib.suggestion("random")
    assert str(raised.value) == message


def test_get_suggestion_config_returns_all_fields_as_given() -> None:
    given = entry(
        name="custom",
        imagePullPolicy="Never",
        resources=CUSTOM_RESOURCES,
        command=["python", "main.py"],
        args=["--port", "6789"],
        env=[{"name": "A", "value": "1"}],
        ports=[{"name": "metrics", "containerPort": 9090}],
        workingDir="/app",
        serviceAccountName="sa",
        persistentVolumeLabels={"type": "local"},
    )
    found = config(given).suggestion("random")
    assert found.container() == {
        "name": "custom",
        "image": "test-image",
        "imagePullPolicy": "Never",
        "resources": CUSTOM_RESOURCES,
        "command": ["python", "main.py"],
        "args": ["--port", "6789"],
        "env": [{"name": "A", "value": "1"}],
        "ports": [{"name": "metrics", "containerPort": 9090}],
        "workingDir": "/app",
    }
    assert found.service_account_name == "sa"
    assert found.persistent_volume_labels == {"type": "local"}


def test_the_last_matching_entry_wins_and_lookups_are_precomputed() -> None:
    katib = config(entry(image="first"), entry(algorithmName="tpe"), entry(image="last"))
    assert katib.suggestion("random").image == "last"
    assert katib.suggestion("random") is katib.suggestion("random")


def test_unknown_fields_are_kept_but_stay_out_of_the_container() -> None:
    data = {**HEAD, "future": {"x": 1}, "runtime": {"suggestions": [entry(typo="y")]}}
    katib = parse_katib_config(data)
    found = katib.suggestion("random")
    assert katib.model_extra == {"future": {"x": 1}}
    assert found.model_extra == {"typo": "y"}
    assert "typo" not in found.container()


def early_stopping_config(**fields: Any) -> KatibConfig:
    stop = {"algorithmName": "medianstop", "image": "stop-image", **fields}
    return config(earlyStoppings=[stop])


def test_early_stopping_defaults_and_lookup() -> None:
    found = early_stopping_config(imagePullPolicy="bogus").early_stopping("medianstop")
    assert found.image_pull_policy == "IfNotPresent"
    assert found.resources.model_dump(mode="json", by_alias=True) == DEFAULT_RESOURCES


@pytest.mark.parametrize(
    ("katib", "message"),
    [
        pytest.param(
            early_stopping_config(),
            "failed to find early stopping config for algorithm: other in ConfigMap: katib-config",
            id="unknown early stopping algorithm",
        ),
        pytest.param(
            early_stopping_config(algorithmName="other", image=""),
            "required value for image configuration of algorithm name: other",
            id="empty early stopping image",
        ),
    ],
)
def test_early_stopping_lookup_errors(katib: KatibConfig, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        katib.early_stopping("other")
    assert str(raised.value) == message


def test_init_defaults() -> None:
    controller = parse_katib_config(HEAD).init.controller
    assert controller.model_dump() == {
        "experiment_suggestion_name": "default",
        "metrics_addr": ":8080",
        "healthz_addr": ":18080",
        "enable_grpc_probe_in_suggestion": True,
        "trial_resources": ("Job.v1.batch",),
        "webhook_port": 8443,
        "inject_security_context": False,
        "leader_election_id": "3fbc96e9.katib.kubeflow.org",
    }
    assert parse_katib_config(HEAD).grpc_probes


def test_init_values_and_empty_strings() -> None:
    init = {
        "controller": {
            "enableGRPCProbeInSuggestion": False,
            "metricsAddr": "",
            "trialResources": [],
        }
    }
    katib = parse_katib_config({**HEAD, "init": init})
    assert not katib.grpc_probes
    assert katib.init.controller.metrics_addr == ":8080"
    assert katib.init.controller.trial_resources == ("Job.v1.batch",)


DECODE_ERRORS = [
    pytest.param(
        [HEAD],
        "katib-config.yaml in ConfigMap katib-config: expected a mapping, got list",
        id="not a mapping",
    ),
    pytest.param(None, "expected a mapping, got NoneType", id="no content"),
    pytest.param(
        {"kind": "KatibConfig"}, "apiVersion: required field is missing", id="no apiVersion"
    ),
    pytest.param(
        {**HEAD, "kind": "Config"}, "kind: expected 'KatibConfig', got 'Config'", id="kind"
    ),
    pytest.param(
        {**HEAD, "apiVersion": "v1"},
        "apiVersion: expected 'config.kubeflow.org/v1beta1', got 'v1'",
        id="apiVersion",
    ),
    pytest.param(
        {**HEAD, "runtime": {"suggestions": [entry(resources={"limits": {"cpu": "invalid"}})]}},
        'runtime.suggestions[0].resources.limits.cpu: invalid quantity "invalid"',
        id="invalid CPU limit",
    ),
    pytest.param(
        {
            **HEAD,
            "runtime": {
                "suggestions": [
                    entry(),
                    entry(
                        persistentVolumeClaimSpec={"resources": {"requests": {"storage": "1 G"}}}
                    ),
                ]
            },
        },
        "runtime.suggestions[1].persistentVolumeClaimSpec.resources.requests.storage: "
        'invalid quantity "1 G"',
        id="invalid PVC size",
    ),
    pytest.param(
        {**HEAD, "runtime": {"suggestions": [{"image": "x"}]}},
        "runtime.suggestions[0].algorithmName: required field is missing",
        id="no algorithmName",
    ),
    pytest.param(
        {},
        "apiVersion: required field is missing; kind: required field is missing",
        id="several errors",
    ),
    pytest.param(
        {
            **HEAD,
            "runtime": {
                "earlyStoppings": [
                    {"algorithmName": "m", "resources": {"requests": {"memory": "lots"}}}
                ]
            },
        },
        'runtime.earlyStoppings[0].resources.requests.memory: invalid quantity "lots"',
        id="invalid early stopping quantity",
    ),
]


@pytest.mark.parametrize(("data", "message"), DECODE_ERRORS)
def test_decode_errors_are_one_line_with_the_field_path(data: object, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_katib_config(data)
    text = str(raised.value)
    assert message in text
    assert "\n" not in text
    assert "pydantic" not in text


def test_the_shared_katib_config_parses_and_every_shipped_algorithm_resolves() -> None:
    raw = yaml.safe_load(SHARED_CONFIG.read_text())
    katib = parse_katib_config(raw)
    shipped = [item["algorithmName"] for item in raw["runtime"]["suggestions"]]
    assert len(shipped) == 11
    for algorithm in shipped:
        found = katib.suggestion(algorithm)
        assert found.image.startswith("ghcr.io/kubeflow/katib/suggestion-")
        assert found.persistent_volume_spec.is_empty
    assert katib.early_stopping("medianstop").image.endswith("earlystopping-medianstop:latest")
    assert katib.grpc_probes
    assert "Job.v1.batch" in katib.init.controller.trial_resources


def test_shipped_pbt_has_a_5gi_read_write_many_claim_and_enas_keeps_its_memory_limit() -> None:
    katib = parse_katib_config(yaml.safe_load(SHARED_CONFIG.read_text()))
    assert katib.suggestion("pbt").persistent_volume_claim_spec.spec() == {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "5Gi"}},
    }
    assert katib.suggestion("random").persistent_volume_claim_spec.spec() == DEFAULT_CLAIM
    assert str(katib.suggestion("enas").resources.limits["memory"]) == "400Mi"
    collectors = katib.runtime.metrics_collectors
    assert [c.kind for c in collectors] == ["StdOut", "File", "TensorFlowEvent"]
    assert str(collectors[2].resources.limits["memory"]) == "1Gi"


# corev1.Container's JSON fields, each with a value a suggestion entry may carry inline.
INLINE_CONTAINER = {
    "name": "svc",
    "image": "test-image",
    "command": ["run"],
    "args": ["--fast"],
    "workingDir": "/work",
    "ports": [{"containerPort": 9000, "name": "extra"}],
    "envFrom": [{"configMapRef": {"name": "env"}}],
    "env": [{"name": "A", "value": "1"}],
    "resources": CUSTOM_RESOURCES,
    "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
    "restartPolicy": "Always",
    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    "volumeDevices": [{"name": "raw", "devicePath": "/dev/xvda"}],
    "livenessProbe": {"tcpSocket": {"port": 9000}},
    "readinessProbe": {"tcpSocket": {"port": 9000}},
    "startupProbe": {"tcpSocket": {"port": 9000}},
    "lifecycle": {"preStop": {"exec": {"command": ["stop"]}}},
    "imagePullPolicy": "Always",
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "FallbackToLogsOnError",
    "securityContext": {"runAsNonRoot": True},
    "stdin": True,
    "stdinOnce": True,
    "tty": True,
}


def test_every_inline_container_field_reaches_the_container() -> None:
    found = config(entry(**INLINE_CONTAINER, serviceAccountName="sa")).suggestion("random")
    assert found.container() == INLINE_CONTAINER


def test_an_entry_with_only_its_name_and_image_gets_every_default() -> None:
    assert summary(config(entry()).suggestion("random")) == defaulted()


def test_init_values_are_read_by_katibs_field_names() -> None:
    controller = {
        "experimentSuggestionName": "mine",
        "metricsAddr": ":9090",
        "healthzAddr": ":19090",
        "trialResources": ["TFJob.v1.kubeflow.org"],
        "webhookPort": 9443,
        "injectSecurityContext": True,
        "leaderElectionID": "mine.katib.kubeflow.org",
    }
    found = parse_katib_config({**HEAD, "init": {"controller": controller}}).init.controller
    assert found.model_extra == {}  # each one read into its field, none kept as an unknown
    assert found.to_dict(exclude={"enable_grpc_probe_in_suggestion"}) == controller
    assert found.leader_election_id == "mine.katib.kubeflow.org"


def test_a_volume_spec_of_empty_values_is_empty_and_gets_no_reclaim_policy() -> None:
    given = {"storageClassName": "", "capacity": {}, "accessModes": []}
    found = config(entry(persistentVolumeSpec=given)).suggestion("random").persistent_volume_spec
    assert found.is_empty
    assert found.persistent_volume_reclaim_policy is None
