"""The Experiment's status write: unchanged conditions are left out of the comparison only.

``core.plan.experiment`` compares the new status without the conditions when they are the
observed tuple itself; these cases hold it to the plain rule (serialise the whole status, set
the counters and times, write only if something differs), key order included.
"""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.lifecycle.experiment import ExperimentState
from katib_resume.core.model import Experiment
from katib_resume.core.plan import experiment as plan_experiment
from katib_resume.core.plan.experiment import _status
from katib_resume.core.trial_phases import STATUS_KEYS
from katib_resume.core.trials import (
    FIELD_OF,
    TrialCounts,
    counts_match,
    replace_status_counts,
    status_counts,
)
from tests.support.harness import load

X = ExperimentState
RUNNING = [
    {"type": "Created", "status": "True", "reason": "ExperimentCreated"},
    {"type": "Running", "status": "True", "reason": "ExperimentRunning"},
]
NOW = EPOCH + timedelta(minutes=5)


def experiment(status: dict[str, Any]) -> Experiment:
    raw = copy.deepcopy(load("from-volume-resume.yaml"))
    raw["metadata"].update(uid="exp-uid", generation=1)
    raw["status"] = status
    return Experiment.model_validate(raw)


def plain(exp: Experiment, counts: TrialCounts) -> dict[str, Any] | None:
    """The rule without the shortcut (only the counters and generation are set here)."""
    old = exp.status.to_dict()
    status = replace_status_counts(old, counts) if counts.total else dict(old)
    status["conditions"] = [c.to_dict() for c in exp.status.conditions]
    status["observedGeneration"] = 1
    if not status["conditions"]:
        del status["conditions"]
    return None if status == old else status


def _running(exp: Experiment, counts: TrialCounts) -> dict[str, Any] | None:
    """The status a Running Experiment that stays Running writes, its conditions unchanged."""
    return _status(
        exp,
        conditions=exp.status.conditions,
        counts=counts,
        before=X.Running,
        after=X.Running,
        now=NOW,
    )


STARTED = {"startTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}
COUNTED = {"trials": 1, "trialsRunning": 1, "runningTrialList": ["t1"]}
ZEROS = {
    "trialsSucceeded": 0,
    "trialsFailed": 0,
    "trialsKilled": 0,
    "trialsPending": 0,
    "trialsEarlyStopped": 0,
    "trialMetricsUnavailable": 0,
}

ZEROS_BUT_KILLED = {key: value for key, value in ZEROS.items() if key != "trialsKilled"}
RUNNING_ONE = TrialCounts(running_trials=("t1",))


@pytest.mark.parametrize(
    ("status", "counts"),
    [
        ({"conditions": RUNNING, **STARTED}, TrialCounts()),  # nothing to write
        ({"conditions": RUNNING, **STARTED}, TrialCounts(running_trials=("t1",))),
        (
            {"conditions": RUNNING, **STARTED, **COUNTED, **ZEROS},
            TrialCounts(running_trials=("t1",)),
        ),
        (
            {"conditions": RUNNING, **STARTED, **COUNTED, **ZEROS},
            TrialCounts(succeeded_trials=("t1",)),
        ),
        ({"conditions": [], **STARTED}, TrialCounts()),  # an empty list is dropped: a write
        ({**STARTED}, TrialCounts()),
        ({"conditions": RUNNING, "startTime": "2026-01-01T00:00:00Z"}, TrialCounts()),
        # the counted fields exactly as written: nothing to write
        ({"conditions": RUNNING, **STARTED, **COUNTED, **ZEROS}, RUNNING_ONE),
        # one counter missing, a stale list, a list that differs, a counter off by one
        ({"conditions": RUNNING, **STARTED, **COUNTED, **ZEROS_BUT_KILLED}, RUNNING_ONE),
        (
            {"conditions": RUNNING, **STARTED, **COUNTED, **ZEROS, "killedTrialList": []},
            RUNNING_ONE,
        ),
        (
            {"conditions": RUNNING, **STARTED, **COUNTED, **ZEROS, "runningTrialList": ["t2"]},
            RUNNING_ONE,
        ),
        ({"conditions": RUNNING, **STARTED, **COUNTED, **ZEROS, "trials": 2}, RUNNING_ONE),
        # another generation observed, or none at all
        (
            {"conditions": RUNNING, **STARTED, **COUNTED, **ZEROS, "observedGeneration": 0},
            RUNNING_ONE,
        ),
        (
            {"conditions": RUNNING, "startTime": "2026-01-01T00:00:00Z", **COUNTED, **ZEROS},
            RUNNING_ONE,
        ),
        # other fields are kept as they are
        (
            {"conditions": RUNNING, **STARTED, **COUNTED, **ZEROS, "currentOptimalTrial": {}},
            RUNNING_ONE,
        ),
    ],
)
def test_unchanged_conditions_write_what_the_whole_status_would(
    status: dict[str, Any], counts: TrialCounts
) -> None:
    exp = experiment(status)
    written = _running(exp, counts)
    expected = plain(exp, counts)
    assert written == expected
    if written is not None and expected is not None:
        assert list(written) == list(expected)  # the same key order as well


@pytest.mark.parametrize(
    ("before", "after", "status"),
    [
        (X.Succeeded, X.Running, {"completionTime": "2026-01-01T00:01:00Z"}),  # a restart
        (X.Succeeded, X.Running, {}),
        (X.Running, X.Succeeded, {}),  # completed now: a completion time
        (X.Running, X.Running, {"completionTime": "2026-01-01T00:01:00Z"}),
        (X.Running, X.Running, {}),
        (X.Pending, X.Pending, {"startTime": None}),
        (X.Created, X.Running, {"startTime": None}),
    ],
)
def test_the_shortcut_never_changes_what_is_written(
    before: ExperimentState,
    after: ExperimentState,
    status: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``_status`` with and without its model-level shortcut write the same status."""
    exp = experiment({"conditions": RUNNING, **STARTED, **COUNTED, **ZEROS, **status})

    def written() -> dict[str, Any] | None:
        return _status(
            exp,
            conditions=exp.status.conditions,
            counts=RUNNING_ONE,
            before=before,
            after=after,
            now=NOW,
        )

    quick = written()
    monkeypatch.setattr(plan_experiment, "_unchanged", lambda *_: False)
    assert quick == written()


NAMES = st.lists(st.sampled_from(["t1", "t2", "t3"]), max_size=3, unique=True).map(sorted)
_LISTS = [list_key for _, _, list_key in STATUS_KEYS]
_COUNTERS = [count_key for _, count_key, _ in STATUS_KEYS]


@st.composite
def counted_statuses(draw: st.DrawFn) -> tuple[dict[str, Any], TrialCounts]:
    """A status holding any of the counted fields, some as the counts would write them, and
    counts of the same few names."""
    phases = [phase for phase, _, _ in STATUS_KEYS]
    lists = {phase: tuple(draw(NAMES)) for phase in phases if draw(st.booleans())}
    counts = TrialCounts(**{FIELD_OF[phase]: names for phase, names in lists.items()})
    status: dict[str, Any] = {"conditions": RUNNING, **STARTED}
    if draw(st.booleans()):
        status.update(status_counts(counts))  # as written: perhaps nothing to write
    for key in draw(st.lists(st.sampled_from(["trials", *_COUNTERS, *_LISTS]), max_size=3)):
        status[key] = draw(NAMES) if key in _LISTS else draw(st.integers(0, 3))
    if draw(st.booleans()):
        status["currentOptimalTrial"] = {"bestTrialName": draw(st.sampled_from(["t1", "t2"]))}
    return status, counts


@given(counted_statuses())
def test_a_status_write_is_the_whole_rule_asked_once_or_again(
    case: tuple[dict[str, Any], TrialCounts],
) -> None:
    """The status left undumped where the counts replace it (and their match remembered) writes
    what the whole rule writes, key order included, asked once and again of the same objects."""
    status, counts = case
    exp = experiment(status)
    expected = plain(exp, counts)
    for _ in range(2):
        written = _running(exp, counts)
        assert written == expected
        if written is not None and expected is not None:
            assert list(written) == list(expected)


def test_a_remembered_match_is_of_that_status_object_only() -> None:
    """``counts_match`` remembers a match by the status's identity: another status, even one
    parsed from the same text, is compared again (and a different one found different)."""
    counts = TrialCounts(running_trials=("t1",))
    same = experiment({**STARTED, **COUNTED, **ZEROS})
    assert counts_match(same.status, counts)
    assert counts.matched is same.status
    other = experiment({**STARTED, **COUNTED, **ZEROS, "runningTrialList": ["t2"]})
    assert not counts_match(other.status, counts)
    assert counts.matched is same.status
    assert counts == TrialCounts(running_trials=("t1",))  # the memo is no part of the value
