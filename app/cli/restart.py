"""What a restart brings back and what it reuses, read off the cluster by UID.

A restart of a ``FromVolume`` Experiment is only the feature it claims to be if the suggestion
service comes back *on the same volume*: a new Deployment and Service (new UIDs), the same PVC
and PV (same UIDs), and a service that found its state there. ``children`` takes a census of the
Suggestion's service objects by UID; comparing a census before and after a restart is the
evidence ``edit --dry-run`` and the demo print, rather than a prediction of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from katib_resume.adapters.fake import Event
from katib_resume.app.cli.kinds import (
    DEPLOYMENT,
    EXPERIMENT,
    PV,
    PVC,
    SERVICE,
    SUGGESTION,
    Resource,
)
from katib_resume.core.lifecycle.experiment import ExperimentState
from katib_resume.core.lifecycle.experiment import derive as derive_experiment
from katib_resume.core.lifecycle.suggestion import SuggestionState
from katib_resume.core.lifecycle.suggestion import derive as derive_suggestion
from katib_resume.core.model import Experiment, Suggestion
from katib_resume.core.names import service_name
from katib_resume.core.ports import NotFound

if TYPE_CHECKING:  # a census reads a runtime; ``edit`` without ``--dry-run`` makes none
    from katib_resume.app.embedded.runtime import Runtime

Children = dict[str, tuple[str, str]]
"""Kind -> (name, UID) of the Suggestion's Deployment, Service, PVC and PV that exist."""
SERVICE_KINDS: tuple[Resource, ...] = (DEPLOYMENT, SERVICE, PVC)
RESTART_STEPS = 1_000
STATE_REASONS = ("SuggestionStateNew", "SuggestionStateRestored", "SuggestionStateRebuilt")


def children(runtime: Runtime, namespace: str, name: str) -> Children:
    """The Suggestion's service objects that exist now (and the PV its PVC is bound to)."""
    cluster = runtime.cluster
    try:
        suggestion = Suggestion.model_validate(cluster.get(SUGGESTION.ref(namespace, name)))
    except NotFound:
        return {}
    child = service_name(name, suggestion.algorithm)
    found: Children = {}
    for resource in SERVICE_KINDS:
        try:
            obj = cluster.get(resource.ref(namespace, child))
        except NotFound:
            continue
        found[resource.kind] = (child, str(obj["metadata"].get("uid")))
        volume = (obj.get("spec") or {}).get("volumeName") if resource is PVC else None
        if volume:
            pv = cluster.get(PV.ref(namespace, str(volume)))
            found[PV.kind] = (str(volume), str(pv["metadata"].get("uid")))
    return found


def states(runtime: Runtime, namespace: str, name: str) -> tuple[str, str]:
    """The derived lifecycle states of the Experiment and of its Suggestion."""
    cluster = runtime.cluster
    experiment = Experiment.model_validate(cluster.get(EXPERIMENT.ref(namespace, name)))
    suggestion = Suggestion.model_validate(cluster.get(SUGGESTION.ref(namespace, name)))
    exp_state = derive_experiment(experiment.status.conditions)
    return exp_state.value, derive_suggestion(suggestion).value


def wait_until_running(runtime: Runtime, namespace: str, name: str) -> int:
    """Step until the Experiment and its Suggestion are both Running again; the steps taken."""
    running = (ExperimentState.Running.value, SuggestionState.Running.value)
    return runtime.run_until(lambda: states(runtime, namespace, name) == running, RESTART_STEPS)


def restart_report(
    before: Children, after: Children, events: Sequence[Event], steps: int
) -> list[str]:
    """One line per service object (back, reused, kept, gone) and the service's own report."""
    lines = [f"after {steps} simulated seconds the Experiment and its Suggestion are Running:"]
    for kind in (DEPLOYMENT.kind, SERVICE.kind, PVC.kind, PV.kind):
        was, now = before.get(kind), after.get(kind)
        if now is not None and was is None:
            lines.append(f"  {kind} {now[0]}: comes back (new UID {now[1]})")
        elif now is not None and was is not None and was[1] == now[1]:
            verb = "reused" if kind in (PVC.kind, PV.kind) else "kept running"
            lines.append(f"  {kind} {now[0]}: {verb}, same UID {now[1]}")
        elif now is not None and was is not None:
            lines.append(f"  {kind} {now[0]}: replaced (UID {was[1]} -> {now[1]})")
        elif was is not None:
            lines.append(f"  {kind} {was[0]}: gone")
    lines += [
        f"  suggestion service: {event.message}"
        for event in events
        if event.ref.kind == SUGGESTION.kind and event.reason in STATE_REASONS
    ]
    return lines
