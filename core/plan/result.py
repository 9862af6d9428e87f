"""The planner's answer: the ordered actions, and which transitions they carry out."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from katib_resume.core.actions import Action, writes


@dataclass(frozen=True, slots=True)
class Step:
    """What one reconcile does to one object's lifecycle (``before is after``: no transition)."""

    before: Enum
    after: Enum
    trigger: str | None = None

    @property
    def moved(self) -> bool:
        return self.before is not self.after


@dataclass(frozen=True, slots=True)
class Plan:
    actions: tuple[Action, ...] = ()
    experiment: Step | None = None
    suggestion: Step | None = None

    @property
    def writes(self) -> tuple[Action, ...]:
        """The actions that change the cluster: empty for a steady-state reconcile."""
        return writes(self.actions)


def event_reason(trigger: str) -> str:
    """A trigger as a Kubernetes event reason: ``restart_requested`` -> ``RestartRequested``."""
    return "".join(part.capitalize() for part in trigger.split("_"))
