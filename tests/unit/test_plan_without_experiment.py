"""The planner's entry (``core/plan/__init__.py``) without a live Experiment: nothing to do
for nothing, a live Suggestion left to the garbage collector, and a deleted one's finalizer
work only (docs/katib-contract.md: the Suggestion is owned by its Experiment)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.actions import (
    AddFinalizer,
    Delete,
    ObjectRef,
    RemoveFinalizer,
    UpdateStatus,
)
from katib_resume.core.katib import ANNOTATION_OWNER_UID, FINALIZER_PV_CLEANUP
from katib_resume.core.model import Experiment, PersistentVolume, Suggestion
from katib_resume.core.observed import Observed
from katib_resume.core.plan import Plan, plan
from katib_resume.core.plan.finalizer import ensure_finalizer
from katib_resume.core.policy import ResumePolicy, traits
from tests.support.harness import shipped_config
from tests.unit.test_provision import experiment, observed, suggestion, trial

GONE = "2026-01-01T00:00:00Z"


def _deleted(model: Any, **meta: Any) -> Any:
    raw = model.to_dict()
    raw["metadata"] = {**raw["metadata"], "deletionTimestamp": GONE, **meta}
    return type(model).model_validate(raw)


def test_nothing_observed_plans_nothing() -> None:
    assert plan(Observed("kubeflow", "gone"), shipped_config(), EPOCH) == Plan()


def test_without_a_live_experiment_a_live_suggestion_is_left_alone() -> None:
    state = observed(experiment(), suggestion(3, 3), [])
    for gone in (None, _deleted(state.experiment)):
        assert plan(replace(state, experiment=gone), shipped_config(), EPOCH) == Plan()


def test_a_deleted_suggestion_of_a_deleted_experiment_only_lets_go() -> None:
    state = observed(experiment(), suggestion(3, 3), [])
    sug: Suggestion = _deleted(state.suggestion, finalizers=[FINALIZER_PV_CLEANUP])
    exp: Experiment = _deleted(state.experiment)
    decided = plan(replace(state, experiment=exp, suggestion=sug), shipped_config(), EPOCH)
    assert isinstance(decided, Plan) and decided.experiment is None
    assert [type(a) for a in decided.actions] == [RemoveFinalizer]


def _suggestion_succeeded(decided: Plan | object) -> tuple[str, str]:
    assert isinstance(decided, Plan)
    (write,) = [
        a for a in decided.actions if isinstance(a, UpdateStatus) and a.ref.kind == "Suggestion"
    ]
    found = next(c for c in write.status["conditions"] if c["type"] == "Succeeded")
    return found["status"], found["reason"]


def test_the_suggestion_says_whether_its_experiment_succeeded_or_failed() -> None:
    done = [trial(i) for i in range(3)]
    succeeded = observed(experiment(maxTrialCount=3), suggestion(3, 3), done)
    assert _suggestion_succeeded(plan(succeeded, shipped_config(), EPOCH)) == (
        "True",
        "Experiment is succeeded",
    )
    lost = [trial(i, "Failed") for i in range(3)]
    failed = observed(experiment(maxTrialCount=5, maxFailedTrialCount=2), suggestion(3, 3), lost)
    assert _suggestion_succeeded(plan(failed, shipped_config(), EPOCH)) == (
        "True",
        "Experiment is failed",
    )


def test_a_deleted_suggestion_without_our_finalizer_is_not_ours_to_clean() -> None:
    state = observed(experiment(), suggestion(3, 3), [])
    sug: Suggestion = _deleted(state.suggestion, finalizers=["someone.else/finalizer"])
    for exp in (None, state.experiment):
        decided = plan(replace(state, experiment=exp, suggestion=sug), shipped_config(), EPOCH)
        assert isinstance(decided, Plan)
        assert not [a for a in decided.actions if isinstance(a, RemoveFinalizer | Delete)]


def test_only_a_volume_policys_suggestion_gets_our_finalizer() -> None:
    held = suggestion(3, 3)
    bare = Suggestion.model_validate(
        {**held.to_dict(), "metadata": {**held.metadata.to_dict(), "finalizers": []}}
    )
    (added,) = ensure_finalizer(bare, traits(ResumePolicy.FROM_VOLUME))
    assert isinstance(added, AddFinalizer) and added.finalizer == FINALIZER_PV_CLEANUP
    assert ensure_finalizer(held, traits(ResumePolicy.FROM_VOLUME)) == ()
    assert ensure_finalizer(bare, traits(ResumePolicy.LONG_RUNNING)) == ()


def test_our_finalizer_deletes_our_pv_by_name_and_uid_then_lets_go() -> None:
    state = observed(experiment(), suggestion(3, 3), [])
    sug: Suggestion = _deleted(state.suggestion, finalizers=[FINALIZER_PV_CLEANUP])
    meta = {
        "name": "pv-1",
        "uid": "pv-uid",
        "annotations": {ANNOTATION_OWNER_UID: sug.metadata.uid},
    }
    pv = PersistentVolume.model_validate({"metadata": meta})
    decided = plan(replace(state, experiment=None, suggestion=sug, pv=pv), shipped_config(), EPOCH)
    assert isinstance(decided, Plan)
    assert decided.actions[0] == Delete(ObjectRef("v1", "PersistentVolume", None, "pv-1"), "pv-uid")
    assert isinstance(decided.actions[1], RemoveFinalizer) and len(decided.actions) == 2
