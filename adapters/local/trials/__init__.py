"""Trials on one machine: the metrics collector and synthetic objective the embedded runtime
uses, and the older one-step ``TrialRunner``.

The embedded runtime runs Trials as a cluster does (``docs/embedded.md``): the trial reconcile
makes Jobs, the fake cluster's Job controller and kubelet run their pods, and ``collector``
(Katib's metrics collector) reports what the pods printed; simulated pods print the synthetic
objective (``objective``). ``TrialRunner`` is not wired into it any more: it runs every
unfinished Trial synchronously through the ``Cluster`` port and writes its outcome itself, for
an embedder that wants Trials finished without Jobs (``tests/unit/test_trial_runner.py``).
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
