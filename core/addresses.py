"""Where Katib's services answer, and how long the controller waits for them.

Kept apart from ``core.katib`` and free of imports, so that the command line reads its defaults
from here without loading the core's models: ``katib-resume --help`` stays fast.
"""

from __future__ import annotations

# Katib's ports of a Suggestion's services (docs/katib-contract.md#ports-and-addresses);
# ``core.katib`` re-exports them.
SUGGESTION_PORT = 6789
EARLY_STOPPING_PORT = 6788

SUGGESTION_ENDPOINT = "{service}.{namespace}:" + str(SUGGESTION_PORT)
EARLY_STOPPING_ENDPOINT = "{service}.{namespace}:" + str(EARLY_STOPPING_PORT)
"""Katib's addresses of a Suggestion's services, as templates (see ``adapters.grpc.endpoints``)."""

DB_MANAGER_ADDRESS = "katib-db-manager.kubeflow:6789"
"""Where early-stopping services read trial metrics (Katib's default DB manager Service)."""

SUGGESTION_TIMEOUT = 10.0
"""Ours: the deadline, in seconds, of every call to a suggestion service."""
