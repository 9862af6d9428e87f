"""Our finalizer on a FromVolume Suggestion: the cleanup no owner reference can do.

A cluster-scoped PV cannot be collected through an owner reference to the namespaced Suggestion
(docs/katib-contract.md#owner-references), so a FromVolume Suggestion carries
``FINALIZER_PV_CLEANUP``: it is added if missing, and when the Suggestion is being deleted the
planner deletes the PV it owns (by the ownership annotation, never another's) and then removes the
finalizer. It does not wait for the PV to disappear: the PV stays protected while its PVC exists,
and the PVC goes only after the Suggestion does.
"""

from __future__ import annotations

from katib_resume.core.actions import Action, AddFinalizer, Delete, ObjectRef, RemoveFinalizer
from katib_resume.core.katib import FINALIZER_PV_CLEANUP
from katib_resume.core.model import Suggestion
from katib_resume.core.observed import Observed
from katib_resume.core.policy import PolicyTraits


def cleanup(observed: Observed, suggestion: Suggestion) -> tuple[Action, ...]:
    """While our finalizer holds a deleted Suggestion: delete our PV, then let go."""
    meta = suggestion.metadata
    if FINALIZER_PV_CLEANUP not in meta.finalizers:
        return ()
    actions: list[Action] = []
    pv = observed.pv
    if pv is not None and pv.owner_uid() == meta.uid and not pv.metadata.is_deleting:
        ref = ObjectRef("v1", "PersistentVolume", None, pv.metadata.name)
        actions.append(Delete(ref, pv.metadata.uid or ""))
    actions.append(
        RemoveFinalizer(
            suggestion_ref(suggestion), FINALIZER_PV_CLEANUP, meta.finalizers, meta.resource_version
        )
    )
    return tuple(actions)


def ensure_finalizer(suggestion: Suggestion, policy: PolicyTraits) -> tuple[Action, ...]:
    """Add the finalizer to a volume policy's Suggestion that lacks it (e.g. made by Katib)."""
    meta = suggestion.metadata
    if not policy.has_volume or FINALIZER_PV_CLEANUP in meta.finalizers:
        return ()
    add = AddFinalizer(
        suggestion_ref(suggestion), FINALIZER_PV_CLEANUP, meta.finalizers, meta.resource_version
    )
    return (add,)


def suggestion_ref(suggestion: Suggestion) -> ObjectRef:
    return ObjectRef(suggestion.api_version, "Suggestion", suggestion.namespace, suggestion.name)
