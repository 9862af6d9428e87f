"""Everything a resume policy implies, in one table.

Katib spreads the meaning of ``spec.resumePolicy`` over five files; here it is one row per policy.
Adding a policy means adding an enum member and a row: the planner, admission and the volume plan
read only these traits, never the policy name itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class ResumePolicy(StrEnum):
    """``spec.resumePolicy`` of an Experiment (and its Suggestion)."""

    NEVER = "Never"
    LONG_RUNNING = "LongRunning"
    FROM_VOLUME = "FromVolume"

    @classmethod
    def parse(cls, raw: str | None) -> ResumePolicy:
        """Katib accepts the empty string and an absent field as the default, ``Never``."""
        if not raw:
            return DEFAULT_POLICY
        return cls(raw)


DEFAULT_POLICY = ResumePolicy.NEVER


@dataclass(frozen=True, slots=True)
class PolicyTraits:
    """What a policy means for the suggestion service once its Experiment has completed.

    restartable: raising ``maxTrialCount`` after a ``ExperimentMaxTrialsReached`` completion
        restarts the Experiment.
    keeps_service: the Deployment and Service stay up after completion (but only while a restart
        is still possible: a service nobody can use again is torn down, fixing Katib bug 11).
    has_volume: the service gets a PersistentVolumeClaim that outlives each completion, mounted
        at ``volumeMountPath``, so that a restarted service resumes from its saved state.
    """

    restartable: bool
    keeps_service: bool
    has_volume: bool


TRAITS: MappingProxyType[ResumePolicy, PolicyTraits] = MappingProxyType(
    {
        ResumePolicy.NEVER: PolicyTraits(restartable=False, keeps_service=False, has_volume=False),
        ResumePolicy.LONG_RUNNING: PolicyTraits(
            restartable=True, keeps_service=True, has_volume=False
        ),
        ResumePolicy.FROM_VOLUME: PolicyTraits(
            restartable=True, keeps_service=False, has_volume=True
        ),
    }
)


def traits(policy: ResumePolicy) -> PolicyTraits:
    """The row of ``TRAITS`` for ``policy``."""
    return TRAITS[policy]
