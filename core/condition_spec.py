"""A condition's wanted content (``ConditionSpec``) and its status values, without the model.

Apart from ``core/conditions.py`` so that Katib's vocabulary (``core/katib.py``: every condition
the lifecycles want), which the fake API server's store reads, does not import pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from katib_resume.core.conditions import Condition


class Status(StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


@dataclass(frozen=True, slots=True)
class ConditionSpec:
    """A condition without timestamps: what the lifecycle wants a condition to say."""

    type: str
    status: Status
    reason: str
    message: str

    def matches(self, condition: Condition | None) -> bool:
        return (
            condition is not None
            and condition.status == self.status
            and condition.reason == self.reason
            and condition.message == self.message
        )
