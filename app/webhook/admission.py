"""The admission decisions over the ports: Katib's validating and mutating webhooks for
Experiments, and its pod webhook (``pod.py``, the metrics-collector sidecar).

Both decide with the core, exactly as ``run -f`` and ``edit`` do: the validating one calls
``core.admission.admit`` (Katib's rules and messages), the mutating one answers with
``core.defaults.default_experiment``'s defaults.
What this module adds is what a webhook must gather from a live cluster:

* the Namespace's labels (the metrics-collector-injection rule) and katib-config's algorithm
  catalog, both lazily (``lookups``);
* the PVs for the core's stale-PV rule (docs/katib-contract.md#stale-pv-check): on CREATE of a
  ``FromVolume`` Experiment that passed every other rule, the PV ``<name>-<algorithm>-<namespace>``
  is read *live* from the API server, never from a cache, so that a PV left by a deleted Experiment
  is seen the moment it exists (``lookups.LivePVs``). A read that fails denies with Katib's
  ``..., error: <err>`` text. (The admission-time check is a courtesy, not the guarantee: the
  controller re-checks ownership when it creates the volume.)

The object is checked as the API server sent it: the mutating webhook runs first, so it has
already been defaulted. DELETE and CONNECT are allowed untouched (nothing to judge).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError

from katib_resume.app.common.inputs import describe
from katib_resume.app.webhook.lookups import (
    LiveCatalog,
    LivePVs,
    LookupFailed,
    NamespaceLabels,
    PVLookupFailed,
)
from katib_resume.app.webhook.patch import json_patch
from katib_resume.app.webhook.pod import PodInjector
from katib_resume.app.webhook.review import JUDGED, Malformed, Request, allowed, denied
from katib_resume.core.addresses import DB_MANAGER_ADDRESS
from katib_resume.core.admission import admit
from katib_resume.core.defaults import default_experiment
from katib_resume.core.denied import Denied
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment
from katib_resume.core.ports import Cluster, ConfigSource
from katib_resume.core.validation import volume_lookup_error

SERVER_ERROR = 500


@dataclass(frozen=True, slots=True)
class Admission:
    cluster: Cluster
    config: ConfigSource
    db_manager: str = DB_MANAGER_ADDRESS
    """katib-db-manager's address, handed to the sidecar as ``-s-db``."""
    pods: PodInjector = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pods", PodInjector(self.cluster, self.config, self.db_manager))

    def validate(self, request: Request) -> Manifest:
        """``/validate-experiment``: the AdmissionReview answering ``request``."""
        if request.operation not in JUDGED:
            return allowed(request.uid)
        new = experiment(request, "object")
        old = experiment(request, "oldObject") if request.operation == "UPDATE" else None
        try:
            admit(
                new,
                old,
                catalog=LiveCatalog(self.config),
                existing_pvs=LivePVs(self.cluster),
                namespace_labels=NamespaceLabels(self.cluster, new.namespace),
            )
        except Denied as denial:
            return denied(request.uid, str(denial))
        except LookupFailed as error:
            return denied(request.uid, str(error), SERVER_ERROR)
        except PVLookupFailed as failed:
            return denied(request.uid, volume_lookup_error(new, failed.error))
        return allowed(request.uid)

    def mutate(self, request: Request) -> Manifest:
        """``/mutate-experiment``: Katib's defaults as a JSON Patch of what they change."""
        if request.operation not in JUDGED:
            return allowed(request.uid)
        given = experiment(request, "object")
        patch = json_patch(given.to_dict(), default_experiment(given).to_dict())
        return allowed(request.uid, patch)

    def mutate_pod(self, request: Request) -> Manifest:
        """``/mutate-pod``: Katib's metrics-collector sidecar in a Trial's pod."""
        return self.pods.mutate(request)


def experiment(request: Request, field: str) -> Experiment:
    """``request.object`` or ``request.oldObject`` as an Experiment, or ``Malformed``.

    The API server fills in ``metadata.namespace`` before admission; a review that omits it
    takes the request's namespace, as the object will be stored there.
    """
    raw = request.obj if field == "object" else request.old
    assert raw is not None, "review.parse_request requires object (and oldObject on UPDATE)"
    metadata = raw.get("metadata")
    if isinstance(metadata, dict) and not metadata.get("namespace") and request.namespace:
        raw = {**raw, "metadata": {**metadata, "namespace": request.namespace}}
    try:
        return Experiment.model_validate(raw)
    except ValidationError as error:
        problem = f"request.{field}: not an Experiment: {describe(error)}"
        raise Malformed(problem, request.uid) from None
