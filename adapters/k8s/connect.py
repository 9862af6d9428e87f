"""From a kubeconfig (or the pod's service account) to a ``Transport``.

``kubernetes.config`` does what every Kubernetes client must: kubeconfig contexts, exec and
token credentials, the in-cluster token and CA. Its errors become one ``ConnectError`` with a
message a user can act on, never a traceback.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException

from katib_resume.adapters.k8s.transport import Retry, Transport


class ConnectError(Exception):
    """No usable credentials for an API server."""


def connect(
    kubeconfig: str | None = None,
    *,
    context: str | None = None,
    timeout: tuple[float, float] = (5.0, 30.0),
    retry: Retry | None = None,
) -> Transport:
    """A transport to the API server of ``kubeconfig``; in-cluster when it is None."""
    configuration = client.Configuration()
    # untyped functions in 37.x, an untyped package before: no `type: ignore` fits both
    loaders: Any = config
    try:
        if kubeconfig is None:
            loaders.load_incluster_config(client_configuration=configuration)
        else:
            loaders.load_kube_config(
                config_file=kubeconfig, context=context, client_configuration=configuration
            )
    except (ConfigException, OSError, ValueError, TypeError) as error:
        where = "in-cluster service account" if kubeconfig is None else f"kubeconfig {kubeconfig}"
        raise ConnectError(f"cannot load the {where}: {error}") from None
    return Transport(client.ApiClient(configuration), timeout=timeout, retry=retry)


def to_url(
    url: str, *, timeout: tuple[float, float] = (5.0, 30.0), retry: Retry | None = None
) -> Transport:
    """A transport to a plain URL with no credentials (a test server, ``kubectl proxy``)."""
    configuration = client.Configuration()
    configuration.host = url.rstrip("/")
    return Transport(client.ApiClient(configuration), timeout=timeout, retry=retry)
