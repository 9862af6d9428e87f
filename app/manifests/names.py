"""The install's own names, ports and labels: one place, so that every object agrees.

The Service the webhook configurations call, the Deployment behind it, the Secret its pod mounts
and the flags the binaries are started with all name each other; deriving them from these
constants (and the namespace) is what keeps them consistent, and the tests check that they are.
The ports the binaries listen on and the paths they serve are ``app.wiring``'s, shared with the
flags' defaults and the servers' routes.
"""

from __future__ import annotations

from typing import Final

from katib_resume.core.katib import DEFAULT_SUGGESTION_STORAGE_CLASS
from katib_resume.core.manifest import Manifest

APP: Final = "katib-resume"
CONTROLLER: Final = "katib-resume-controller"
WEBHOOK: Final = "katib-resume-webhook"
WEBHOOK_SECRET: Final = "katib-resume-webhook-cert"
WEBHOOK_CONFIGURATION: Final = "katib-resume"
POD_WEBHOOK_CONFIGURATION: Final = "katib.kubeflow.org"
POD_WEBHOOK: Final = "mutator.pod.katib.kubeflow.org"
"""Katib's names for its pod webhook: applying ours replaces Katib's, never runs beside it."""

SERVICE_PORT: Final = 443
CERT_DIR: Final = "/etc/katib-resume/certs"

USER_ID: Final = 10001
"""The image's non-root user (``Dockerfile``); the pods run as it."""

STORAGE_CLASS: Final = DEFAULT_SUGGESTION_STORAGE_CLASS  # issue 5: the local volume mode
NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"


def labels(component: str | None = None) -> dict[str, str]:
    """The recommended ``app.kubernetes.io`` labels; ``component`` for per-binary objects."""
    found = {"app.kubernetes.io/name": APP, "app.kubernetes.io/part-of": APP}
    return found | ({"app.kubernetes.io/component": component} if component else {})


def selector(component: str) -> dict[str, str]:
    """What a Deployment and its Service select on: stable, unlike the full label set."""
    return {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": component}


def metadata(name: str, namespace: str | None = None, component: str | None = None) -> Manifest:
    found: Manifest = {"name": name}
    if namespace is not None:
        found["namespace"] = namespace
    return found | {"labels": labels(component)}


def service_host(namespace: str) -> str:
    """The webhook Service's in-cluster DNS name: what its certificate must be valid for."""
    return f"{WEBHOOK}.{namespace}.svc"
