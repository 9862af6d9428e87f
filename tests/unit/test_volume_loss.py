"""A kept volume lost by hand, in the planner: what the conditions say and what is done.

The whole story in the fake world is ``tests/integration/test_volume_loss.py``; here each rule
on its own: the Succeeded condition names a missing or terminating claim; while Deploying, a
terminating claim is ``VolumeTerminating`` and no Deployment is made to hold it; an unavailable
Deployment of ours on it is deleted (with a Warning event), an available or foreign one is not.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.actions import Create, Delete, RecordEvent, UpdateStatus
from katib_resume.core.katib import MSG_CAN_RESTART_FROM_VOLUME
from katib_resume.core.model import Deployment, PersistentVolumeClaim, Suggestion
from katib_resume.core.observed import Observed
from katib_resume.core.plan import Plan, plan
from katib_resume.core.plan.children import ensure, release_claim
from katib_resume.core.plan.marks import succeeded_mark, volume_lost
from katib_resume.core.plan.suggestion import Context
from katib_resume.core.volumes import volume_plan
from tests.support.harness import shipped_config
from tests.unit.test_provision import child, experiment, observed, suggestion, trial

CLAIM = "kubeflow/from-volume-resume-random"
LOST = f"PersistentVolumeClaim {CLAIM} is missing"


def terminating_pvc() -> PersistentVolumeClaim:
    raw = child("PersistentVolumeClaim", status={"phase": "Bound"})
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return PersistentVolumeClaim.model_validate(raw)


def deployment(available: bool, owner: str = "s-uid") -> Deployment:
    raw = child(
        "Deployment", status={"conditions": [{"type": "Available", "status": str(available)}]}
    )
    raw["metadata"]["uid"] = "d-uid"
    raw["metadata"]["ownerReferences"][0]["uid"] = owner
    return Deployment.model_validate(raw)


def test_volume_lost_names_the_claim_missing_or_terminating() -> None:
    state = observed(experiment(), suggestion(3, 3), [])
    assert volume_lost(state, "from-volume-resume-random") is None
    assert volume_lost(replace(state, pvc=None), "from-volume-resume-random") == LOST
    gone = replace(state, pvc=terminating_pvc())
    assert volume_lost(gone, "x") == f"PersistentVolumeClaim {CLAIM} is terminating"


def test_the_succeeded_message_says_the_volume_is_lost_and_what_a_restart_can_do() -> None:
    can = succeeded_mark(Context(restartable=True), True, LOST)
    assert can.message == (
        f"Suggestion is succeeded, suggestion volume is lost ({LOST}), "
        "can be restarted on a new volume without the saved state"
    )
    cannot = succeeded_mark(Context(restartable=False, failed=True), True, LOST)
    assert (
        cannot.message
        == f"Suggestion is succeeded, suggestion volume is lost ({LOST}), can't be restarted"
    )
    assert cannot.reason == "Experiment is failed"
    assert succeeded_mark(Context(restartable=True), False, LOST).message == (
        "Suggestion is succeeded, can't be restarted"
    )


def _succeeded(sug: Suggestion) -> Suggestion:
    conditions = [
        {"type": "Created", "status": "True", "reason": "SuggestionCreated"},
        {
            "type": "Succeeded",
            "status": "True",
            "reason": "Experiment is succeeded",
            "message": MSG_CAN_RESTART_FROM_VOLUME,
        },
    ]
    raw = sug.to_dict()
    raw["status"]["conditions"] = conditions
    return Suggestion.model_validate(raw)


def _suggestion_status(result: Plan | Any) -> list[dict[str, Any]]:
    assert isinstance(result, Plan)
    writes = [
        a for a in result.actions if isinstance(a, UpdateStatus) and a.ref.kind == "Suggestion"
    ]
    return [c for w in writes for c in w.status["conditions"]]


def test_a_succeeded_suggestion_whose_claim_went_is_re_marked_once() -> None:
    done = experiment(maxTrialCount=3)
    exp_raw = done.to_dict()
    exp_raw["status"] = {
        "conditions": [
            {"type": "Created", "status": "True", "reason": "ExperimentCreated"},
            {"type": "Succeeded", "status": "True", "reason": "ExperimentMaxTrialsReached"},
        ],
    }
    state = Observed(
        "kubeflow",
        "from-volume-resume",
        type(done).model_validate(exp_raw),
        _succeeded(suggestion(3, 3)),
        tuple(trial(i) for i in range(3)),
    )
    conditions = _suggestion_status(plan(state, shipped_config(), EPOCH))
    succeeded = next(c for c in conditions if c["type"] == "Succeeded")
    assert LOST in succeeded["message"]
    sug = state.suggestion
    assert sug is not None
    raw = sug.to_dict()
    raw["status"]["conditions"] = conditions
    again = replace(state, suggestion=Suggestion.model_validate(raw))
    assert _suggestion_status(plan(again, shipped_config(), EPOCH)) == []


def _deploying(**more: Any) -> Observed:
    sug = suggestion(3, 3)
    raw = sug.to_dict()
    raw["status"]["conditions"] = [
        {"type": "Created", "status": "True", "reason": "SuggestionCreated"},
        {"type": "DeploymentReady", "status": "False", "reason": "DeploymentNotReady"},
        {"type": "Running", "status": "False", "reason": "DeploymentNotReady"},
    ]
    state = observed(experiment(), Suggestion.model_validate(raw), [])
    return replace(state, pvc=terminating_pvc(), **more)


def test_no_deployment_is_made_on_a_terminating_claim() -> None:
    state = _deploying(deployment=None)
    sug = state.suggestion
    assert sug is not None
    volume = volume_plan(sug, shipped_config().suggestion("random"))
    made = ensure(state, sug, shipped_config(), volume)
    assert [c.manifest["kind"] for c in made.creates] == []
    assert made.waiting_for == (
        "PersistentVolumeClaim from-volume-resume-random to finish terminating",
    )
    result = plan(state, shipped_config(), EPOCH)
    assert isinstance(result, Plan)
    made_kinds = {a.manifest["kind"] for a in result.actions if isinstance(a, Create)}
    assert made_kinds <= {"Trial"}
    ready = next(c for c in _suggestion_status(result) if c["type"] == "DeploymentReady")
    assert ready["reason"] == "VolumeTerminating" and CLAIM in ready["message"]


def test_only_our_unavailable_deployment_on_a_terminating_claim_is_deleted() -> None:
    sug = suggestion(3, 3)
    volume = volume_plan(sug, shipped_config().suggestion("random"))
    held = _deploying(deployment=deployment(False))
    actions = release_claim(held, sug, volume)
    assert [type(a) for a in actions] == [Delete, RecordEvent]
    delete = actions[0]
    assert isinstance(delete, Delete)
    assert (delete.ref.name, delete.uid) == ("from-volume-resume-random", "d-uid")
    event = actions[1]
    assert isinstance(event, RecordEvent) and event.type == "Warning"
    assert event.reason == "VolumeTerminating" and CLAIM in event.message
    assert release_claim(_deploying(deployment=deployment(True)), sug, volume) == ()
    assert release_claim(_deploying(deployment=deployment(False, "other")), sug, volume) == ()
    assert release_claim(held, sug, None) == ()
    bound = replace(held, pvc=observed(experiment(), sug, []).pvc)
    assert release_claim(bound, sug, volume) == ()
