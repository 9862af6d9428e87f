"""Admission's objective rules (Katib's ``validateObjective``, docs/katib-contract.md#field-rules).

Katib stops at the objective: when it has an error, the rules after it (algorithm, template,
parameters, collector) are not run, so a user sees the objective's errors alone.
"""

from __future__ import annotations

from katib_resume.core.field_errors import FieldError, go_strings, invalid, invalid_shown, required
from katib_resume.core.model.experiment import ObjectiveSpec

PATH = "spec.objective"
TYPES = ("minimize", "maximize")


def objective_errors(objective: ObjectiveSpec | None) -> list[FieldError]:
    if objective is None:
        return [required(PATH, "must be specified")]
    errors = []
    if objective.type not in TYPES:
        detail = f"must be {TYPES[0]} or {TYPES[1]}"
        errors.append(invalid(f"{PATH}.type", objective.type or "", detail))
    name = objective.objective_metric_name
    if not name:
        errors.append(required(f"{PATH}.objectiveMetricName", "must be specified"))
    additional = objective.additional_metric_names
    if name in additional:
        detail = f"should not contain {PATH}.objectiveMetricName"
        errors.append(
            invalid_shown(f"{PATH}.additionalMetricNames", go_strings(additional), detail)
        )
    return errors
