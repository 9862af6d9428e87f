"""A snapshot of what the cluster holds for one Experiment: the planner's only input from the world.

The shell gathers it fresh on every reconcile (level-based: no memory is trusted between
reconciles). ``validation`` and ``assignments`` carry the suggestion service's answers
when the planner asked for them (``core.plan.needs``): ``None`` means not asked (yet).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from katib_resume.core.manifest import Manifest
from katib_resume.core.model import (
    Deployment,
    Experiment,
    OwnedObject,
    PersistentVolume,
    PersistentVolumeClaim,
    Suggestion,
    Trial,
)
from katib_resume.core.trial_ledger import TrialLedger


class Outcome(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True, slots=True)
class Validation:
    """The suggestion service's verdict on the algorithm (and early-stopping) settings.

    ``UNAVAILABLE`` (the service did not answer) is retried later; Katib turns it into a
    permanent failure (bug 19). A ``VALID`` verdict may carry a note the user should see (the
    service rebuilt its lost state), which the Running condition's message then repeats.
    """

    outcome: Outcome
    message: str = ""


VALID = Validation(Outcome.VALID)


@dataclass(frozen=True, slots=True)
class Assignments:
    """One ``GetSuggestions`` answer: the new assignments and the algorithm settings that came
    with them (empty when the service returned none).

    ``exhausted`` is the service saying "no more" (a grid with every point issued), in words
    for the user: the Experiment can complete (Katib's ``ExperimentSuggestionEndReached``).
    """

    items: tuple[Manifest, ...] = ()
    algorithm_settings: tuple[Manifest, ...] = ()
    exhausted: str = ""


@dataclass(frozen=True, slots=True)
class Observed:
    """Everything the planner may look at for the Experiment ``namespace/name``."""

    namespace: str
    name: str
    experiment: Experiment | None = None
    suggestion: Suggestion | None = None
    trials: Sequence[Trial] = ()
    deployment: Deployment | None = None
    service: OwnedObject | None = None
    pvc: PersistentVolumeClaim | None = None
    pv: PersistentVolume | None = None
    claimants: tuple[PersistentVolume, ...] = ()
    """The PVs whose ``claimRef`` names our PVC (``core.prebound``): all of them while the PVC
    is missing or unbound, else the one it is bound to."""
    service_account: OwnedObject | None = None
    role: OwnedObject | None = None
    role_binding: OwnedObject | None = None
    validation: Validation | None = None
    assignments: tuple[Manifest, ...] | None = None
    """New assignments from ``GetSuggestions`` (``()``: asked, none came; ``None``: not asked)."""
    algorithm_settings: tuple[Manifest, ...] = ()
    """Settings (``{name, value}``) the service returned with ``assignments``: Katib records
    them in ``status.algorithmSettings`` and sends them back with the next request, which is how
    an algorithm such as Hyperband carries its state between calls."""
    exhausted: str = ""
    """The service's "no more" (``Assignments.exhausted``), when it was asked for assignments:
    the Experiment can succeed with ``ExperimentSuggestionEndReached`` once no Trial is active."""
    ledger: TrialLedger | None = None
    """The trial ledger of ``trials``, when the shell keeps one per Experiment (folded from the
    Trials that changed since its last reconcile); ``None``: the planner folds ``trials``."""

    def rbac(self) -> dict[str, OwnedObject | None]:
        """The early-stopping RBAC objects by kind."""
        return {
            "ServiceAccount": self.service_account,
            "Role": self.role,
            "RoleBinding": self.role_binding,
        }
