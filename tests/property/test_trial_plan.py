"""Random run-object histories never leave a Trial in an impossible state.

Hypothesis plays a run object's status (Katib Job conditions appearing and flipping, the object
vanishing, metrics arriving or not, the early-stopping service stepping in, time passing) against
the trial planner, and checks after every reconcile what must always hold.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.conditions import Status
from katib_resume.core.katib_trial import TRIAL_FINALIZER
from katib_resume.core.lifecycle import TRIAL
from katib_resume.core.lifecycle.trial import COMPLETED, TrialState, derive
from katib_resume.core.observation import MetricRow, TrialKey
from katib_resume.core.plan.trial import TrialContext
from katib_resume.core.trials import classify
from tests.support.trial_player import TrialPlayer
from tests.support.trials import job_status, new_trial

TERMINAL = ("Succeeded", "Failed", "MetricsUnavailable", "EarlyStopped")
_EDGES = {(source, row.dest) for row in TRIAL.table for source in row.sources}

KATIB_JOB_STATUSES = [
    [],
    [("Complete", "True")],
    [("SuccessCriteriaMet", "True"), ("Complete", "True")],
    [("FailureTarget", "True"), ("Failed", "True")],
    [("Failed", "False"), ("Complete", "False")],
]
job_conditions = st.one_of(
    st.sampled_from(KATIB_JOB_STATUSES),
    st.lists(
        st.tuples(
            st.sampled_from(["Complete", "Failed", "SuccessCriteriaMet", "Suspended"]),
            st.sampled_from(["True", "False"]),
        ),
        max_size=3,
    ),
)
status_events = st.tuples(st.just("status"), job_conditions)
metric_events = st.tuples(st.just("metric"), st.sampled_from(["0.5", "unavailable", "", "nan"]))
events = st.one_of(  # repeated to weigh them: Job conditions most, early stops least
    *[status_events] * 6,
    *[metric_events] * 2,
    st.tuples(st.just("wait"), st.integers(1, 200)),
    st.tuples(st.just("vanish"), st.none()),
    st.tuples(st.sampled_from(["early_stop", "wait"]), st.just(60)),
)


def _early_stop(player: TrialPlayer) -> None:
    assert player.trial is not None
    if derive(player.model.status.conditions) is not TrialState.Running:
        return  # the early-stopping service only stops running Trials
    status = player.model.status.to_dict()
    status["conditions"].append(
        {"type": "EarlyStopped", "status": "True", "reason": "TrialEarlyStopped"}
    )
    player.trial["status"] = status


def _play(player: TrialPlayer, kind: str, value: Any) -> None:
    name = player.name
    if kind == "status" and name in player.runs:
        player.set_run_status(job_status(*value))
    elif kind == "vanish":
        player.runs.pop(name, None)
    elif kind == "metric":
        row = MetricRow("2020-01-01T00:00:00Z", "accuracy", value)
        player.log.report(TrialKey("default", name), [row])
    elif kind == "early_stop":
        _early_stop(player)
    elif kind == "wait":
        player.clock.advance(value)


def _check(player: TrialPlayer, before: TrialState) -> TrialState:
    trial = player.model
    conditions = trial.status.conditions
    state = derive(conditions)
    types = [c.type for c in conditions]
    assert len(types) == len(set(types))
    assert sum(1 for c in conditions if c.type in TERMINAL) <= 1
    assert all(c.status is Status.TRUE for c in conditions if c.type in TERMINAL)
    assert state is before or (before, state) in _EDGES, f"{before} -> {state} is no edge"
    assert (trial.status.completion_time is not None) == (state in COMPLETED)
    assert classify(trial).value == state.value or state in (TrialState.Pending, TrialState.Created)
    if state is not TrialState.Pending:
        assert trial.status.start_time is not None
    assert trial.metadata.finalizers == (TRIAL_FINALIZER,)
    return state


@given(st.booleans(), st.booleans(), st.lists(events, max_size=25))
def test_random_run_histories_keep_the_trial_possible(
    push: bool, retain: bool, history: list[tuple[str, Any]]
) -> None:
    trial = new_trial("t", collector="Push" if push else "StdOut", retain=retain)
    player = TrialPlayer(trial, context=TrialContext(metrics_wait=100))
    player.reconcile()  # the finalizer
    state = _check(player, TrialState.Pending)
    for kind, value in history:
        _play(player, kind, value)
        before = derive(player.model.status.conditions)
        player.reconcile()
        state = _check(player, before)
        if state in COMPLETED and not retain:
            player.reconcile()
            assert "t" not in player.runs, "a completed Trial's run object is deleted"
    assert state is derive(player.model.status.conditions)


@given(st.booleans(), st.lists(events, max_size=20))
def test_the_observation_is_fetched_whenever_the_planner_would_read_it(
    push: bool, history: list[tuple[str, Any]]
) -> None:
    """``wants_observation`` False means the rows cannot change the plan: the shell may skip
    the db-manager call on every such pass."""
    from katib_resume.core.observation import metric_names
    from katib_resume.core.plan.trial import decide_trial, wants_observation

    player = TrialPlayer(new_trial("t", collector="Push" if push else "StdOut"))
    rows = (MetricRow("2020-01-01T00:00:00Z", "accuracy", "0.5"),)
    for kind, value in history:
        _play(player, kind, value)
        trial, run = player.model, player.runs.get("t")
        if not wants_observation(trial, run):
            now = player.clock.now()
            without = decide_trial(trial, run, (), player.context, now)
            assert decide_trial(trial, run, rows, player.context, now) == without
        assert metric_names(trial.spec.objective) == ("accuracy",)
        player.reconcile()
