"""Everything a resume policy implies, in one table.

Katib spreads the meaning of ``spec.resumePolicy`` over five files; here it is one row per policy.
Adding a policy means adding an enum member and a row: the planner, admission and the volume plan
read only these traits, never the policy name itself.

Not every combination of traits is one the lifecycles can honour, so every row is checked when
this module is imported (``problem``): a row that restarts the Experiment but keeps neither the
service nor a volume would restart the Experiment and leave its Suggestion released for ever (its
restart is guarded by the kept volume), so it is refused. ``tests/integration/test_policy_rows.py``
plays every combination through the planner and checks that ``problem`` refuses exactly those
the machines cannot carry.
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


def problem(row: PolicyTraits) -> str | None:
    """Why the lifecycles cannot carry ``row`` (None: they can).

    A restart brings the suggestion service back only if something of it survived completion:
    its Deployment (``keeps_service``: the Suggestion never leaves Running) or its volume
    (``has_volume``: the released Suggestion restarts on the same claim).
    """
    if row.restartable and not (row.keeps_service or row.has_volume):
        return "a restartable policy must keep the service or a volume to restart it from"
    return None


def checked(
    rows: dict[ResumePolicy, PolicyTraits],
) -> MappingProxyType[ResumePolicy, PolicyTraits]:
    """``rows`` as the read-only table, or ``ValueError`` naming the first impossible row."""
    for policy, row in rows.items():
        reason = problem(row)
        if reason is not None:
            raise ValueError(f"resume policy {policy.value}: {reason}")
    missing = set(ResumePolicy) - set(rows)
    if missing:
        raise ValueError(f"resume policies without traits: {sorted(missing)}")
    return MappingProxyType(rows)


TRAITS: MappingProxyType[ResumePolicy, PolicyTraits] = checked(
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
