"""The local trial runtime: Katib's trial controller, Job and StdOut metrics collector in one.

``TrialRunner.tick`` runs every unfinished Trial through the ``Cluster`` port and writes its
outcome on the Trial's status; metrics come from the synthetic objective (the default) or from
the primary container's command run as a local process (``command=True``).
"""

from katib_resume.adapters.local.trials.metrics import (
    MetricRecord,
    metric_names,
    parse_pairs,
    parse_stdout,
)
from katib_resume.adapters.local.trials.objective import FLOOR, synthetic_metrics, synthetic_outcome
from katib_resume.adapters.local.trials.outcome import REASON_LOST, Outcome
from katib_resume.adapters.local.trials.runner import ANNOTATION_ATTEMPTS, TrialRunner

__all__ = [
    "ANNOTATION_ATTEMPTS",
    "FLOOR",
    "REASON_LOST",
    "MetricRecord",
    "Outcome",
    "TrialRunner",
    "metric_names",
    "parse_pairs",
    "parse_stdout",
    "synthetic_metrics",
    "synthetic_outcome",
]
