"""The Experiment's count fields are ``int32`` in Katib's API: a larger value is refused.

Kubernetes does not enforce an OpenAPI ``format: int32`` on a custom resource, but Katib's Go
types are ``*int32``: its webhook and controller cannot even decode a larger number, so such an
Experiment can never be admitted. Without this rule, a count above the range admitted here would
be a budget no run ever reaches. The rule is separate from ``validation``'s policy checks and
returns ``(field, value, detail)``; ``validation`` turns each into its ``Invalid`` field error.
"""

from __future__ import annotations

from katib_resume.core.model.experiment import ExperimentSpec

INT32_MAX = 2**31 - 1
_COUNTS = (
    ("maxTrialCount", "max_trial_count"),
    ("parallelTrialCount", "parallel_trial_count"),
    ("maxFailedTrialCount", "max_failed_trial_count"),
)


def int32_overflows(spec: ExperimentSpec) -> list[tuple[str, int, str]]:
    """The count fields of ``spec`` above ``INT32_MAX``, in the API's field order."""
    found = []
    for field, attribute in _COUNTS:
        value = getattr(spec, attribute)
        if value is not None and value > INT32_MAX:
            found.append((f"spec.{field}", value, f"must be less than or equal to {INT32_MAX}"))
    return found
