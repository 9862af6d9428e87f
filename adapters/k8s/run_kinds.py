"""Which Trial run-object kinds the API server serves, so that only those are watched.

Katib looks each ``trialResources`` kind up at start and skips one whose CRD is missing, with
"Job watch error. CRD might be missing. Please install CRD and restart katib-controller"
(docs/katib-contract.md#trial-controller, trial test T1): a watch on a kind the server does not
serve would never list, and the controller would never become ready. The probe is a list of at most
one object.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from katib_resume.adapters.k8s.resources import RUN_KINDS, resource
from katib_resume.adapters.k8s.transport import Transport
from katib_resume.core.ports import NotFound
from katib_resume.core.trial_run import describe_kind

log = logging.getLogger("katib_resume.cluster")
MISSING = "Job watch error. CRD might be missing. Please install CRD and restart katib-controller"


def served_run_kinds(
    transport: Transport, namespace: str | None, kinds: Iterable[tuple[str, str]] = RUN_KINDS
) -> tuple[tuple[str, str], ...]:
    """The run-object kinds of ``kinds`` that the server answers a list of."""
    served = []
    for api_version, kind in kinds:
        path = resource(api_version, kind).collection(namespace)
        try:
            transport.request("GET", path, query=(("limit", "1"),))
        except NotFound:
            log.warning(MISSING, extra={"kind": describe_kind((api_version, kind))})
            continue
        served.append((api_version, kind))
    return tuple(served)
