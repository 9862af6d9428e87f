"""The katib-config (``config.kubeflow.org/v1beta1``, ``KatibConfig``): decoded, defaulted, indexed.

Katib decodes the ConfigMap with its scheme, which applies defaults on decode
(docs/katib-contract.md#katib-config); we do the same in the models' validators, so every
``SuggestionConfig`` anyone sees is already defaulted, exactly like the entries Katib's composer
reads. Unknown fields are kept as extras (a newer Katib may add some) and otherwise ignored; fields
of ``corev1.Container`` written inline in a suggestion entry go into the suggestion container
(``SuggestionConfig.container``).

Two choices differ in form, not in outcome, from Katib. Katib re-reads the ConfigMap on every
lookup; here the shell parses it once per observed version and the planner looks entries up in
dicts built at construction (the last entry of an algorithm wins, as in Katib). And a decode error
is one line naming the field path and the problem, never a validation dump.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, PrivateAttr, ValidationError, ValidationInfo, field_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from katib_resume.core.config_specs import ClaimSpecConfig, ResourceRequirements, VolumeSpecConfig
from katib_resume.core.katib import (
    CONFIG_KEY,
    DEFAULT_LOCAL_VOLUME_PATH_PREFIX,
    DEFAULT_MOUNT_PATH,
    SUGGESTION_PORT,
    SUGGESTION_PORT_NAME,
)
from katib_resume.core.kube import KubeModel
from katib_resume.core.manifest import Manifest
from katib_resume.core.names import CONFIG_MAP_NAME

PULL_POLICIES = frozenset({"Always", "IfNotPresent", "Never"})
DEFAULT_PULL_POLICY = "IfNotPresent"

CONTAINER_FIELDS = frozenset(
    {
        *("name", "image", "command", "args", "workingDir", "ports", "envFrom", "env"),
        *("resources", "resizePolicy", "restartPolicy", "volumeMounts", "volumeDevices"),
        *("livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "imagePullPolicy"),
        *("terminationMessagePath", "terminationMessagePolicy", "securityContext"),
        *("stdin", "stdinOnce", "tty"),
    }
)
"""The JSON fields of ``corev1.Container``: the ones a suggestion entry may carry inline."""


class ConfigError(Exception):
    """The katib-config is unusable for a lookup; the message is Katib's, or one clear line."""


def missing_config_map(name: str = CONFIG_MAP_NAME) -> ConfigError:
    """No ConfigMap ``name``: Katib passes the API server's NotFound through, so a user sees
    ``configmaps "<name>" not found`` (no namespace: the API server's text has none)."""
    return ConfigError(f'configmaps "{name}" not found')


def missing_config_key(name: str = CONFIG_MAP_NAME) -> ConfigError:
    """ConfigMap ``name`` has no ``katib-config.yaml`` in its data: Katib's text."""
    return ConfigError(f"failed to find {CONFIG_KEY} in ConfigMap: {name}")


def _not_found(what: str, algorithm: str) -> ConfigError:
    return ConfigError(
        f"failed to find {what} config for algorithm: {algorithm} in ConfigMap: {CONFIG_MAP_NAME}"
    )


def _missing_image(algorithm: str) -> ConfigError:
    return ConfigError(f"required value for image configuration of algorithm name: {algorithm}")


RESERVED_PORT_ERROR = (
    f'invalid suggestion config: a port with name "{SUGGESTION_PORT_NAME}" '
    f"or number {SUGGESTION_PORT} must not be specified"
)


class _ImageConfig(KubeModel):
    """An image to run, with Katib's pull-policy and resource defaults
    (docs/katib-contract.md#katib-config)."""

    image: str = ""
    image_pull_policy: str = Field(DEFAULT_PULL_POLICY, validate_default=True)
    resources: ResourceRequirements = Field(ResourceRequirements(), validate_default=True)

    @field_validator("image_pull_policy")
    @classmethod
    def _default_pull_policy(cls, value: str) -> str:
        return value if value in PULL_POLICIES else DEFAULT_PULL_POLICY

    @field_validator("resources")
    @classmethod
    def _default_resources(cls, value: ResourceRequirements) -> ResourceRequirements:
        return value.with_container_defaults()


class EarlyStoppingConfig(_ImageConfig):
    """``runtime.earlyStoppings[]``: Katib reads only the image, pull policy and resources."""

    algorithm_name: str

    def check(self) -> EarlyStoppingConfig:
        if not self.image.strip():
            raise _missing_image(self.algorithm_name)
        return self


class MetricsCollectorConfig(_ImageConfig):
    """``runtime.metricsCollectors[]``: the sidecar the pod webhook injects for a collector kind
    (``app.webhook.collector``); ``waitAllProcesses`` becomes its ``-w`` flag when set."""

    kind: str
    wait_all_processes: bool | None = None


class ContainerPort(KubeModel):
    container_port: int
    name: str | None = None


class VolumeMount(KubeModel):
    name: str
    mount_path: str


class SuggestionConfig(_ImageConfig):
    """``runtime.suggestions[]``: an inline container plus the service account and volume."""

    algorithm_name: str
    name: str = ""
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: tuple[dict[str, Any], ...] = ()
    volume_mounts: tuple[VolumeMount, ...] = ()
    ports: tuple[ContainerPort, ...] = ()
    readiness_probe: dict[str, Any] | None = None
    liveness_probe: dict[str, Any] | None = None
    service_account_name: str = ""
    volume_mount_path: str = Field(DEFAULT_MOUNT_PATH, validate_default=True)
    persistent_volume_claim_spec: ClaimSpecConfig = Field(ClaimSpecConfig(), validate_default=True)
    persistent_volume_spec: VolumeSpecConfig = Field(VolumeSpecConfig(), validate_default=True)
    persistent_volume_labels: dict[str, str] | None = None
    local_volume_path_prefix: str = Field(DEFAULT_LOCAL_VOLUME_PATH_PREFIX, validate_default=True)
    """Ours (``localVolumePathPrefix``): where the local volume mode puts its directories."""

    @field_validator("volume_mount_path")
    @classmethod
    def _default_mount_path(cls, value: str) -> str:
        return value or DEFAULT_MOUNT_PATH

    @field_validator("local_volume_path_prefix")
    @classmethod
    def _check_prefix(cls, value: str) -> str:
        """Empty takes the default, as Katib defaults its other fields; a relative path or a
        ``..`` would put the directory wherever the kubelet happens to resolve it, so the
        config is refused at load time rather than when the first PV is created."""
        if not value:
            return DEFAULT_LOCAL_VOLUME_PATH_PREFIX
        if not value.startswith("/") or ".." in value.split("/"):
            raise PydanticCustomError(
                "local_volume_path_prefix",
                "must be an absolute path without '..', got '{value}'",
                {"value": value},
            )
        return value

    @field_validator("persistent_volume_claim_spec")
    @classmethod
    def _default_claim(cls, value: ClaimSpecConfig) -> ClaimSpecConfig:
        return value.with_defaults()

    @field_validator("persistent_volume_spec")
    @classmethod
    def _default_volume(cls, value: VolumeSpecConfig) -> VolumeSpecConfig:
        return value.with_defaults()

    def check(self) -> SuggestionConfig:
        """Raise the ``ConfigError`` Katib raises when composing from this entry, else ``self``."""
        if not self.image.strip():
            raise _missing_image(self.algorithm_name)
        if any(_is_reserved(port) for port in self.ports):
            raise ConfigError(RESERVED_PORT_ERROR)
        return self

    def container(self) -> Manifest:
        """The inline ``corev1.Container`` as fresh JSON, without empty or non-container fields."""
        data = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return {k: v for k, v in data.items() if k in CONTAINER_FIELDS and v not in ("", [], {})}

    def mounts_volume(self, volume: str) -> bool:
        return any(mount.name == volume for mount in self.volume_mounts)


def _is_reserved(port: ContainerPort) -> bool:
    return port.name == SUGGESTION_PORT_NAME or port.container_port == SUGGESTION_PORT


class ControllerConfig(KubeModel):
    """``init.controller``: only ``enableGRPCProbeInSuggestion`` matters to the lifecycle."""

    experiment_suggestion_name: str = Field("default", validate_default=True)
    metrics_addr: str = Field(":8080", validate_default=True)
    healthz_addr: str = Field(":18080", validate_default=True)
    enable_grpc_probe_in_suggestion: bool = Field(True, alias="enableGRPCProbeInSuggestion")
    trial_resources: tuple[str, ...] = Field(("Job.v1.batch",), validate_default=True)
    webhook_port: int = 8443
    inject_security_context: bool = False
    """The pod webhook copies the first container's securityContext into the sidecar."""
    leader_election_id: str = Field(
        "3fbc96e9.katib.kubeflow.org", alias="leaderElectionID", validate_default=True
    )

    @field_validator(
        "experiment_suggestion_name", "metrics_addr", "healthz_addr", "leader_election_id"
    )
    @classmethod
    def _default_text(cls, value: str, info: ValidationInfo) -> str:
        return value or str(cls.model_fields[str(info.field_name)].default)

    @field_validator("trial_resources")
    @classmethod
    def _default_trial_resources(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return value or ("Job.v1.batch",)


class InitConfig(KubeModel):
    controller: ControllerConfig = ControllerConfig()


class RuntimeConfig(KubeModel):
    suggestions: tuple[SuggestionConfig, ...] = ()
    early_stoppings: tuple[EarlyStoppingConfig, ...] = ()
    metrics_collectors: tuple[MetricsCollectorConfig, ...] = ()


class KatibConfig(KubeModel):
    """The whole katib-config; look entries up with ``suggestion`` and ``early_stopping``."""

    api_version: Literal["config.kubeflow.org/v1beta1"]
    kind: Literal["KatibConfig"]
    init: InitConfig = InitConfig()
    runtime: RuntimeConfig = RuntimeConfig()
    _suggestions: dict[str, SuggestionConfig] = PrivateAttr(default_factory=dict)
    _early_stoppings: dict[str, EarlyStoppingConfig] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        """Index the entries once; later entries overwrite earlier ones (Katib's last match)."""
        self._suggestions = {entry.algorithm_name: entry for entry in self.runtime.suggestions}
        self._early_stoppings = {e.algorithm_name: e for e in self.runtime.early_stoppings}

    @property
    def grpc_probes(self) -> bool:
        return self.init.controller.enable_grpc_probe_in_suggestion

    def suggestion(self, algorithm: str) -> SuggestionConfig:
        entry = self._suggestions.get(algorithm)
        if entry is None:
            raise _not_found("suggestion", algorithm)
        return entry.check()

    def early_stopping(self, algorithm: str) -> EarlyStoppingConfig:
        entry = self._early_stoppings.get(algorithm)
        if entry is None:
            raise _not_found("early stopping", algorithm)
        return entry.check()


def parse_katib_config(data: object) -> KatibConfig:
    """Decode the content of ``katib-config.yaml`` (loaded from YAML) or raise ``ConfigError``."""
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{CONFIG_KEY} in ConfigMap {CONFIG_MAP_NAME}: expected a mapping, "
            f"got {type(data).__name__}"
        )
    try:
        return KatibConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError("; ".join(_describe(e) for e in error.errors())) from None


def _describe(error: ErrorDetails) -> str:
    path = ""
    for part in error["loc"]:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    if error["type"] == "missing":
        problem = "required field is missing"
    elif error["type"] == "literal_error":
        problem = f"expected {error.get('ctx', {}).get('expected')}, got {error['input']!r}"
    else:
        problem = error["msg"]
    return f"{path or '<root>'}: {problem}"
