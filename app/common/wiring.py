"""What the binaries' flags and the install manifests must agree on, written once.

The default namespace, the ports the controller and the webhook listen on and the HTTP paths
they serve: the flags' defaults (``cli.main``, ``cli.manifest_flags``), the servers' routes
(``webhook.routes``, ``cluster.main``) and the generated Deployments, Services and webhook
configurations (``manifests``) all read them here. No imports, so ``--help`` pays nothing for it.
"""

from __future__ import annotations

from typing import Final

DEFAULT_NAMESPACE: Final = "kubeflow"
"""Where Katib, its katib-config and the install live unless told otherwise."""

METRICS_PORT: Final = 8080
HEALTH_PORT: Final = 18080
WEBHOOK_PORT: Final = 8443

VALIDATE_PATH: Final = "/validate-experiment"
MUTATE_PATH: Final = "/mutate-experiment"
POD_PATH: Final = "/mutate-pod"
"""Katib's pod mutating webhook (the metrics-collector sidecar)."""
HEALTHZ_PATH: Final = "/healthz"
READYZ_PATH: Final = "/readyz"

RELIST_SECONDS: Final = 300.0
"""How often the controller lists its watched kinds again from the API server (``controller
--relist-seconds``): the repair of a watch event lost without an error. Five minutes, the
length of one watch request (``adapters.k8s.watch.SERVER_TIMEOUT``): one extra list per kind
per watch, an API server load of the order of the watches' own, and a lost event delays
convergence by at most that long."""
