"""The two Deployments, the webhook's Service and its disruption budget.

The webhook runs as its own Deployment rather than as a second container of the controller's
pods, for availability: with ``failurePolicy: Fail`` every Experiment write in the cluster waits on
it, so all its replicas serve at once and it is drained by its own PodDisruptionBudget, while only
the controller's leader works. Apart, a controller crash loop (a broken katib-config, an API
outage) cannot take admission down with it, nor can a bad certificate stop the controller, and
each pod carries only its own ServiceAccount's token (``rbac.py``).

Both pods run the one image (``ENTRYPOINT ["katib-resume"]``) as its non-root user, with a
read-only root filesystem (an ``emptyDir`` on ``/tmp`` for anything that wants a scratch file),
no privilege escalation and no capabilities. ``POD_NAMESPACE`` and ``POD_NAME`` come from the
downward API: the namespace where the controller keeps its Lease and the identity it holds it as.
"""

from __future__ import annotations

import copy

from katib_resume.app.common import wiring
from katib_resume.app.manifests import names
from katib_resume.app.manifests.options import Options
from katib_resume.core.manifest import Manifest
from katib_resume.core.names import CONFIG_MAP_NAME

REPLICAS = 2
RESOURCES = {
    "requests": {"cpu": "100m", "memory": "128Mi"},
    "limits": {"cpu": "1", "memory": "512Mi"},
}


def workloads(options: Options) -> list[Manifest]:
    return [
        controller_deployment(options),
        webhook_service(options.namespace),
        webhook_deployment(options),
        webhook_disruption_budget(options.namespace),
    ]


def controller_deployment(options: Options) -> Manifest:
    """Two replicas under leader election; probes on the health port; metrics exposed; the
    Trials run as Katib's trial controller runs them (``--run-trials``), their observations read
    from katib-db-manager."""
    args = [
        *("controller", "--all-namespaces"),
        *("--config-map", f"{options.namespace}/{CONFIG_MAP_NAME}"),
        *("--metrics-addr", f":{wiring.METRICS_PORT}"),
        *("--health-addr", f":{wiring.HEALTH_PORT}"),
        "--leader-elect",
        *("--run-trials", "--db-manager-address", options.db_manager_address),
    ]
    container = _container("controller", options.image, args)
    container["ports"] = [
        _port("metrics", wiring.METRICS_PORT),
        _port("health", wiring.HEALTH_PORT),
    ]
    container["livenessProbe"] = _probe(wiring.HEALTHZ_PATH, "health", "HTTP")
    container["readinessProbe"] = _probe(wiring.READYZ_PATH, "health", "HTTP")
    return _deployment(names.CONTROLLER, "controller", options.namespace, container, [])


def webhook_deployment(options: Options) -> Manifest:
    """Serves HTTPS on the webhook port with the certificate Secret mounted read-only."""
    args = [
        *("webhook", "--cert-dir", names.CERT_DIR, "--port", str(wiring.WEBHOOK_PORT)),
        *("--config-map", f"{options.namespace}/{CONFIG_MAP_NAME}"),
        *("--db-manager-address", options.db_manager_address),
    ]
    container = _container("webhook", options.image, args)
    container["ports"] = [_port("https", wiring.WEBHOOK_PORT)]
    container["livenessProbe"] = _probe(wiring.HEALTHZ_PATH, "https", "HTTPS")
    container["readinessProbe"] = _probe(wiring.HEALTHZ_PATH, "https", "HTTPS")
    container["volumeMounts"].append(
        {"name": "certs", "mountPath": names.CERT_DIR, "readOnly": True}
    )
    secret = {"name": "certs", "secret": {"secretName": names.WEBHOOK_SECRET}}
    return _deployment(names.WEBHOOK, "webhook", options.namespace, container, [secret])


def webhook_service(namespace: str) -> Manifest:
    """Port 443 (what the webhook configurations call) to the pods' ``https`` port."""
    port = {"name": "https", "port": names.SERVICE_PORT, "targetPort": "https", "protocol": "TCP"}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": names.metadata(names.WEBHOOK, namespace, "webhook"),
        "spec": {"selector": names.selector("webhook"), "ports": [port], "type": "ClusterIP"},
    }


def webhook_disruption_budget(namespace: str) -> Manifest:
    """A node drain keeps one webhook pod serving: admission never goes dark on purpose."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": names.metadata(names.WEBHOOK, namespace, "webhook"),
        "spec": {"minAvailable": 1, "selector": {"matchLabels": names.selector("webhook")}},
    }


def _deployment(
    name: str, component: str, namespace: str, container: Manifest, volumes: list[Manifest]
) -> Manifest:
    pod = {
        "serviceAccountName": name,
        "securityContext": _pod_security(),
        "containers": [container],
        "volumes": [{"name": "tmp", "emptyDir": {}}, *volumes],
        "affinity": _spread(component),
        "terminationGracePeriodSeconds": 30,
    }
    template = {"metadata": {"labels": names.labels(component)}, "spec": pod}
    spec = {
        "replicas": REPLICAS,
        "selector": {"matchLabels": names.selector(component)},
        "template": template,
    }
    meta = names.metadata(name, namespace, component)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}


def _container(name: str, image: str, args: list[str]) -> Manifest:
    return {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": args,
        "env": [
            _field_env("POD_NAMESPACE", "metadata.namespace"),
            _field_env("POD_NAME", "metadata.name"),
        ],
        "resources": copy.deepcopy(RESOURCES),
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }


def _pod_security() -> Manifest:
    return {
        "runAsNonRoot": True,
        "runAsUser": names.USER_ID,
        "runAsGroup": names.USER_ID,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _spread(component: str) -> Manifest:
    """Prefer the replicas on different nodes (a preference: a one-node kind cluster works)."""
    term = {
        "labelSelector": {"matchLabels": names.selector(component)},
        "topologyKey": "kubernetes.io/hostname",
    }
    preferred = [{"weight": 100, "podAffinityTerm": term}]
    return {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}


def _probe(path: str, port: str, scheme: str) -> Manifest:
    return {
        "httpGet": {"path": path, "port": port, "scheme": scheme},
        "periodSeconds": 10,
        "timeoutSeconds": 3,
        "failureThreshold": 3,
    }


def _port(name: str, number: int) -> Manifest:
    return {"name": name, "containerPort": number, "protocol": "TCP"}


def _field_env(name: str, path: str) -> Manifest:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}
