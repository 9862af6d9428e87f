"""The objects a Suggestion owns, as it wants them: Deployment, Service and early-stopping RBAC.

These are pure functions of the Suggestion and the katib-config entries handed in
(docs/katib-contract.md#labels to docs/katib-contract.md#suggestion-pod). Katib's composer reads the
ConfigMap itself in the middle of building a Deployment and sets owner references through the
client's scheme; here the caller looks the entries up first (``KatibConfig.suggestion`` /
``early_stopping``), so building cannot touch the cluster and the same inputs always give the same
manifests.

Whether a Suggestion gets a volume comes from its resume policy's traits (``core.policy``), never
from the policy name. Every child carries the Suggestion as its controller owner, so the garbage
collector removes them with it; the cluster-scoped PV is the exception, see ``core.volumes``.
"""

from __future__ import annotations

from katib_resume.core.config import EarlyStoppingConfig, SuggestionConfig
from katib_resume.core.katib import (
    API_VERSION,
    EARLY_STOPPING_CONTAINER,
    EARLY_STOPPING_PORT,
    EARLY_STOPPING_PORT_NAME,
    GROUP,
    GRPC_HEALTH_SERVICE,
    LABEL_DEPLOYMENT,
    LABEL_EXPERIMENT,
    LABEL_ISTIO_INJECT,
    LABEL_SUGGESTION,
    SUGGESTION_CONTAINER,
    SUGGESTION_PORT,
    SUGGESTION_PORT_NAME,
    VOLUME_NAME,
)
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Suggestion
from katib_resume.core.names import service_name
from katib_resume.core.policy import traits

RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_API_VERSION = f"{RBAC_GROUP}/v1"
CONTROLLED_KINDS: tuple[tuple[str, str], ...] = (
    (API_VERSION, "Experiment"),
    (API_VERSION, "Suggestion"),
    (API_VERSION, "Trial"),
    ("apps/v1", "Deployment"),
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
    (RBAC_API_VERSION, "Role"),
    (RBAC_API_VERSION, "RoleBinding"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "PersistentVolume"),
)
"""Every kind (apiVersion, kind) the controller reads: the Experiment, its Suggestion and Trials,
and what a Suggestion owns; owners before what they own (the order ``delete`` reports them in).
The watch caches hold these and nothing else."""
PROBE_DELAY_SECONDS = 10
READINESS_PERIOD_SECONDS = 10
LIVENESS_PERIOD_SECONDS = 120
LIVENESS_FAILURE_THRESHOLD = 12


def child_name(suggestion: Suggestion) -> str:
    """``<name>-<algorithm>``: the Deployment, Service, PVC, ServiceAccount, Role, RoleBinding."""
    return service_name(suggestion.name, suggestion.algorithm)


def suggestion_labels(suggestion: Suggestion) -> dict[str, str]:
    """Katib's ``SuggestionLabels``: the Suggestion's labels plus the four selector labels."""
    return {
        **suggestion.metadata.labels,
        LABEL_DEPLOYMENT: child_name(suggestion),
        LABEL_EXPERIMENT: suggestion.name,
        LABEL_SUGGESTION: suggestion.name,
        LABEL_ISTIO_INJECT: "false",
    }


def owner_reference(suggestion: Suggestion) -> Manifest:
    """The controller reference to ``suggestion``; no ``uid`` before it has one (a preview)."""
    reference: Manifest = {"apiVersion": API_VERSION, "kind": suggestion.kind}
    reference["name"] = suggestion.name
    if suggestion.metadata.uid:
        reference["uid"] = suggestion.metadata.uid
    return reference | {"controller": True, "blockOwnerDeletion": True}


def early_stopping_algorithm(suggestion: Suggestion) -> str:
    """The early-stopping algorithm's name; empty when the Suggestion has no early stopping."""
    spec = suggestion.spec.early_stopping
    return spec.algorithm_name if spec is not None else ""


def has_early_stopping(suggestion: Suggestion) -> bool:
    return early_stopping_algorithm(suggestion) != ""


def rbac_wanted(suggestion: Suggestion, config: SuggestionConfig) -> bool:
    """Early stopping needs a service account that may write Trials, unless one is configured."""
    return has_early_stopping(suggestion) and not config.service_account_name


def _metadata(suggestion: Suggestion, **maps: dict[str, str]) -> Manifest:
    """Name, namespace, owner; then the given label/annotation maps that are not empty."""
    metadata: Manifest = {"name": child_name(suggestion), "namespace": suggestion.namespace}
    metadata |= _non_empty(**maps)
    metadata["ownerReferences"] = [owner_reference(suggestion)]
    return metadata


def _non_empty(**maps: dict[str, str]) -> Manifest:
    """Copies of the given maps, leaving out the empty ones (Go omits a nil map)."""
    return {key: dict(value) for key, value in maps.items() if value}


def _port(name: str, number: int, key: str = "containerPort") -> Manifest:
    return {"name": name, key: number}


def _grpc_probe(period: int, **extra: int) -> Manifest:
    target = {"port": SUGGESTION_PORT, "service": GRPC_HEALTH_SERVICE}
    timing = {"initialDelaySeconds": PROBE_DELAY_SECONDS, "periodSeconds": period}
    return {"grpc": target, **timing, **extra}


def _suggestion_container(
    suggestion: Suggestion, config: SuggestionConfig, grpc_probes: bool
) -> Manifest:
    container = config.container()
    container.setdefault("name", SUGGESTION_CONTAINER)
    ports = container.get("ports", [])
    container["ports"] = [*ports, _port(SUGGESTION_PORT_NAME, SUGGESTION_PORT)]
    if grpc_probes:
        container.setdefault("readinessProbe", _grpc_probe(READINESS_PERIOD_SECONDS))
        container.setdefault(
            "livenessProbe",
            _grpc_probe(LIVENESS_PERIOD_SECONDS, failureThreshold=LIVENESS_FAILURE_THRESHOLD),
        )
    if traits(suggestion.spec.policy).has_volume and not config.mounts_volume(VOLUME_NAME):
        mount = {"name": VOLUME_NAME, "mountPath": config.volume_mount_path}
        container["volumeMounts"] = [*container.get("volumeMounts", []), mount]
    return container


def _early_stopping_container(config: EarlyStoppingConfig) -> Manifest:
    container: Manifest = {"name": EARLY_STOPPING_CONTAINER, "image": config.image}
    container["imagePullPolicy"] = config.image_pull_policy
    container["ports"] = [_port(EARLY_STOPPING_PORT_NAME, EARLY_STOPPING_PORT)]
    resources = config.resources.model_dump(mode="json", by_alias=True)
    return container | ({"resources": resources} if resources else {})


def _pod_spec(
    suggestion: Suggestion,
    config: SuggestionConfig,
    early_stopping: EarlyStoppingConfig | None,
    grpc_probes: bool,
) -> Manifest:
    containers = [_suggestion_container(suggestion, config.check(), grpc_probes)]
    algorithm = early_stopping_algorithm(suggestion)
    if algorithm:
        if early_stopping is None:
            raise ValueError(f"desired_deployment needs the early stopping config of {algorithm}")
        containers.append(_early_stopping_container(early_stopping.check()))
    spec: Manifest = {"containers": containers}
    account = config.service_account_name or (child_name(suggestion) if algorithm else "")
    if account:
        spec["serviceAccountName"] = account
    if traits(suggestion.spec.policy).has_volume:
        claim = {"claimName": child_name(suggestion)}
        spec["volumes"] = [{"name": VOLUME_NAME, "persistentVolumeClaim": claim}]
    return spec


def desired_deployment(
    suggestion: Suggestion,
    config: SuggestionConfig,
    early_stopping: EarlyStoppingConfig | None,
    *,
    grpc_probes: bool,
) -> Manifest:
    """The suggestion service's Deployment (docs/katib-contract.md#suggestion-pod).

    Raises ``ConfigError`` for an entry Katib would refuse (blank image, reserved port), and
    ``ValueError`` when the Suggestion uses early stopping but ``early_stopping`` is ``None``.
    """
    labels, annotations = suggestion.metadata.labels, suggestion.metadata.annotations
    selector = suggestion_labels(suggestion)
    template = {"metadata": {"labels": selector} | _non_empty(annotations=annotations)}
    template["spec"] = _pod_spec(suggestion, config, early_stopping, grpc_probes)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(suggestion, labels=labels, annotations=annotations),
        "spec": {"selector": {"matchLabels": dict(selector)}, "template": template},
    }


def desired_service(suggestion: Suggestion) -> Manifest:
    """ClusterIP Service: ``suggestion-api``, and ``earlystop-api`` with early stopping."""
    ports = [_port(SUGGESTION_PORT_NAME, SUGGESTION_PORT, "port")]
    if has_early_stopping(suggestion):
        ports.append(_port(EARLY_STOPPING_PORT_NAME, EARLY_STOPPING_PORT, "port"))
    spec = {"selector": suggestion_labels(suggestion), "ports": ports, "type": "ClusterIP"}
    return {"apiVersion": "v1", "kind": "Service", "metadata": _metadata(suggestion), "spec": spec}


def desired_rbac(suggestion: Suggestion) -> tuple[Manifest, Manifest, Manifest]:
    """ServiceAccount, Role (all verbs on Trials) and the RoleBinding joining them."""
    name = child_name(suggestion)
    account: Manifest = {"apiVersion": "v1", "kind": "ServiceAccount"}
    account["metadata"] = _metadata(suggestion)
    role: Manifest = {"apiVersion": RBAC_API_VERSION, "kind": "Role"}
    role["metadata"] = _metadata(suggestion)
    role["rules"] = [
        {"apiGroups": [GROUP], "resources": ["trials", "trials/status"], "verbs": ["*"]}
    ]
    subject = {"kind": "ServiceAccount", "name": name, "namespace": suggestion.namespace}
    binding: Manifest = {"apiVersion": RBAC_API_VERSION, "kind": "RoleBinding"}
    binding |= {"metadata": _metadata(suggestion), "subjects": [subject]}
    binding["roleRef"] = {"apiGroup": RBAC_GROUP, "kind": "Role", "name": name}
    return account, role, binding
