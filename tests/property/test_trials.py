"""Properties of trial accounting over generated Trial populations and simulated runs.

The simulation plays the Experiment controller against a world that finishes Trials in random
phases: each round it creates ``trials_to_create`` Trials, then some Pending Trials start and at
least one active Trial finishes. It checks the budget (never more than ``maxTrialCount`` Trials,
also after a resume raises the budget), liveness (a running Experiment always has an active Trial
or creates one) and that every run ends by one of Katib's three rules.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from katib_resume.core.conditions import ConditionSpec
from katib_resume.core.katib import (
    EXP_GOAL_REACHED,
    EXP_MAX_FAILED,
    EXP_MAX_TRIALS,
    LABEL_EXPERIMENT,
)
from katib_resume.core.model.experiment import ExperimentSpec
from katib_resume.core.model.trial import Trial
from katib_resume.core.objective import goal_reached
from katib_resume.core.trial_phases import TrialPhase
from katib_resume.core.trials import (
    classify,
    completion,
    count_trials,
    status_counts,
    trials_to_create,
)

P = TrialPhase
CONDITION_TYPES = [*(p.value for p in P if p is not P.PENDING), "Created", "Unrelated"]
STATUSES = ["True", "False", "Unknown"]
FINISHED = [P.SUCCEEDED, P.FAILED, P.KILLED, P.EARLY_STOPPED, P.METRICS_UNAVAILABLE]

conditions_st = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(CONDITION_TYPES), "status": st.sampled_from(STATUSES)}
    ),
    max_size=8,
)


def build(name: str, conditions: list[dict[str, str]], loss: float | None = None) -> Trial:
    status: dict[str, Any] = {"conditions": conditions}
    if loss is not None:
        metric = {"name": "loss", "min": str(loss), "max": str(loss), "latest": str(loss)}
        status["observation"] = {"metrics": [metric]}
    metadata = {"name": name, "namespace": "ns", "labels": {LABEL_EXPERIMENT: "exp"}}
    return Trial.model_validate({"metadata": metadata, "status": status})


populations = st.lists(conditions_st, max_size=25).map(
    lambda lists: [build(f"trial-{i:02d}", c) for i, c in enumerate(lists)]
)


def oracle(conditions: list[dict[str, str]]) -> P:
    """An independent reading of docs/katib-contract.md#trial-phases: the first condition of each
    type decides its status."""
    first: dict[str, str] = {}
    for condition in conditions:
        first.setdefault(condition["type"], condition["status"])
    for phase in ("Killed", "Failed", "Succeeded", "EarlyStopped", "Running"):
        if first.get(phase) == "True":
            return P(phase)
    return P.METRICS_UNAVAILABLE if first.get("MetricsUnavailable") == "True" else P.PENDING


@settings(deadline=None)
@given(conditions_st)
def test_classify_is_total_and_first_match(conditions: list[dict[str, str]]) -> None:
    assert classify(build("t", conditions)) is oracle(conditions)


@settings(deadline=None)
@given(populations)
def test_counts_partition_the_trials(trials: list[Trial]) -> None:
    counts = count_trials(trials)
    listed = [name for phase in P for name in counts.names(phase)]
    assert sorted(listed) == sorted(t.metadata.name for t in trials)
    assert counts.total == len(trials) == counts.completed + counts.active
    assert counts.failed_total <= counts.completed
    for trial in trials:
        assert trial.metadata.name in counts.names(classify(trial))
    for phase in P:
        assert list(counts.names(phase)) == sorted(counts.names(phase))
    assert status_counts(counts)["trials"] == len(trials)


# --- simulated runs -------------------------------------------------------------------------

CONDITIONS_OF = {
    P.PENDING: [{"type": "Created", "status": "True"}],
    P.RUNNING: [{"type": "Created", "status": "True"}, {"type": "Running", "status": "True"}],
}


def conditions_of(phase: P) -> list[dict[str, str]]:
    if phase in CONDITIONS_OF:
        return CONDITIONS_OF[phase]
    done = [{"type": "Running", "status": "False"}, {"type": phase.value, "status": "True"}]
    return [CONDITIONS_OF[P.PENDING][0], *done]


class World:
    """Trials by name, with the phase and (for Succeeded ones) the loss each one reported."""

    def __init__(self) -> None:
        self.phases: dict[str, P] = {}
        self.losses: dict[str, float] = {}

    def trials(self) -> list[Trial]:
        return [
            build(name, conditions_of(phase), self.losses.get(name))
            for name, phase in self.phases.items()
        ]

    def names(self, *phases: P) -> list[str]:
        return sorted(name for name, phase in self.phases.items() if phase in phases)


def step(world: World, data: st.DataObject) -> None:
    """The world moves on: some Pending Trials start, at least one active Trial finishes."""
    pending = world.names(P.PENDING)
    started = data.draw(st.lists(st.sampled_from(pending), unique=True)) if pending else []
    for name in started:
        world.phases[name] = P.RUNNING
    active = world.names(P.PENDING, P.RUNNING)
    for name in data.draw(st.lists(st.sampled_from(active), min_size=1, unique=True)):
        world.phases[name] = data.draw(st.sampled_from(FINISHED))
        if world.phases[name] is P.SUCCEEDED:
            world.losses[name] = data.draw(st.integers(0, 100)) / 100


def run(spec: ExperimentSpec, world: World, data: st.DataObject) -> ConditionSpec:
    """Reconcile until a completion rule matches, checking budget and liveness at each round."""
    budget = spec.max_trial_count or 0
    for _ in range(budget + 1):
        trials = world.trials()
        counts = count_trials(trials)
        verdict = completion(spec, counts, goal_reached(spec.objective, trials))
        if verdict is not None:
            return verdict
        create = trials_to_create(spec, counts)
        assert create > 0 or counts.active > 0, "a running Experiment must never stall"
        for _ in range(create):
            world.phases[f"trial-{len(world.phases):03d}"] = P.PENDING
        assert len(world.phases) <= budget
        step(world, data)
    raise AssertionError("each round completes a Trial, so the run must end within the budget")


experiment_specs = st.fixed_dictionaries(
    {
        "algorithm": st.just({"algorithmName": "random"}),
        "maxTrialCount": st.integers(1, 20),
        "objective": st.fixed_dictionaries(
            {"type": st.just("minimize"), "objectiveMetricName": st.just("loss")},
            optional={"goal": st.floats(0.0, 0.2)},
        ),
    },
    optional={"parallelTrialCount": st.integers(1, 6), "maxFailedTrialCount": st.integers(0, 10)},
).map(ExperimentSpec.model_validate)


@settings(deadline=None)
@given(experiment_specs, st.integers(1, 10), st.data())
def test_a_run_never_exceeds_the_budget_and_ends_by_a_rule(
    spec: ExperimentSpec, extra: int, data: st.DataObject
) -> None:
    world = World()
    verdict = run(spec, world, data)
    event(f"ended by {verdict.reason}")
    assert verdict in (EXP_GOAL_REACHED, EXP_MAX_FAILED, EXP_MAX_TRIALS)
    if verdict == EXP_MAX_TRIALS:
        assert len(world.phases) == spec.max_trial_count
        budget = len(world.phases) + extra
        resumed = spec.model_copy(update={"max_trial_count": budget})
        assert run(resumed, world, data) in (EXP_GOAL_REACHED, EXP_MAX_FAILED, EXP_MAX_TRIALS)
        assert len(world.phases) <= budget
