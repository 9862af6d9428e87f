"""A Trial's phase and the Experiment status fields that count and name the Trials of each.

Apart from ``core/trials.py`` (which reads Trials, and so their models) because the fake API
server's store names these fields too, and it reads no model.
"""

from __future__ import annotations

from enum import StrEnum


class TrialPhase(StrEnum):
    """A Trial's phase for counting. Member order is Katib's first-match order
    (docs/katib-contract.md#trial-phases).

    Every phase but ``PENDING`` is the Trial condition type that, when True, puts a Trial in it.
    """

    KILLED = "Killed"
    FAILED = "Failed"
    SUCCEEDED = "Succeeded"
    EARLY_STOPPED = "EarlyStopped"
    RUNNING = "Running"
    METRICS_UNAVAILABLE = "MetricsUnavailable"
    PENDING = "Pending"


COMPLETED_PHASES = frozenset(
    {
        TrialPhase.SUCCEEDED,
        TrialPhase.FAILED,
        TrialPhase.KILLED,
        TrialPhase.EARLY_STOPPED,
        TrialPhase.METRICS_UNAVAILABLE,
    }
)
"""The phases of a Trial that will not run again, whatever its outcome (the one definition)."""

STATUS_KEYS: tuple[tuple[TrialPhase, str, str], ...] = (
    (TrialPhase.SUCCEEDED, "trialsSucceeded", "succeededTrialList"),
    (TrialPhase.FAILED, "trialsFailed", "failedTrialList"),
    (TrialPhase.KILLED, "trialsKilled", "killedTrialList"),
    (TrialPhase.PENDING, "trialsPending", "pendingTrialList"),
    (TrialPhase.RUNNING, "trialsRunning", "runningTrialList"),
    (TrialPhase.EARLY_STOPPED, "trialsEarlyStopped", "earlyStoppedTrialList"),
    (TrialPhase.METRICS_UNAVAILABLE, "trialMetricsUnavailable", "metricsUnavailableTrialList"),
)


COMPLETED_STATUS_KEYS = tuple(key for phase, key, _ in STATUS_KEYS if phase in COMPLETED_PHASES)
"""The status counters of the completed phases: their sum is the Trials completed."""


TRIAL_LIST_KEYS = tuple(list_key for _, _, list_key in STATUS_KEYS)
"""The status fields that name the Trials of each phase (sorted lists of names)."""
TRIAL_STATUS_KEYS = frozenset(
    key for _, count_key, list_key in STATUS_KEYS for key in (count_key, list_key)
) | {"trials"}
"""Every status field ``status_counts`` owns, whether or not it writes it this time."""
