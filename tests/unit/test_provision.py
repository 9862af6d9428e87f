"""Trials for an active Experiment: requests, assignments turned into Trials, surplus deletion."""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.actions import Create, Delete, UpdateSpec, UpdateStatus
from katib_resume.core.config import KatibConfig
from katib_resume.core.desired import desired_trial
from katib_resume.core.model import (
    Deployment,
    Experiment,
    OwnedObject,
    PersistentVolumeClaim,
    Suggestion,
    Trial,
)
from katib_resume.core.observed import Observed
from katib_resume.core.plan import NeedAssignments, Plan, plan
from tests.support.harness import load, shipped_config

RUNNING_SUGGESTION = [
    {"type": "Created", "status": "True", "reason": "SuggestionCreated"},
    {"type": "DeploymentReady", "status": "True", "reason": "DeploymentReady"},
    {"type": "Running", "status": "True", "reason": "SuggestionRunning"},
]
RUNNING_EXPERIMENT = [
    {"type": "Created", "status": "True", "reason": "ExperimentCreated"},
    {"type": "Running", "status": "True", "reason": "ExperimentRunning"},
]


def experiment(**spec: Any) -> Experiment:
    raw = copy.deepcopy(load("from-volume-resume.yaml"))
    raw["metadata"]["uid"] = "exp-uid"
    raw["spec"].update(spec)
    raw["status"] = {"conditions": RUNNING_EXPERIMENT}
    return Experiment.model_validate(raw)


def suggestion(requests: int, assigned: int) -> Suggestion:
    return Suggestion.model_validate(
        {
            "metadata": {
                "name": "from-volume-resume",
                "namespace": "kubeflow",
                "uid": "s-uid",
                "resourceVersion": "7",
                "finalizers": ["resume.katib.kubeflow.org/pv-cleanup"],
            },
            "spec": {
                "algorithm": {"algorithmName": "random"},
                "requests": requests,
                "resumePolicy": "FromVolume",
            },
            "status": {
                "conditions": RUNNING_SUGGESTION,
                "suggestions": [assignment(i) for i in range(assigned)],
                "suggestionCount": assigned,
            },
        }
    )


def assignment(index: int) -> dict[str, Any]:
    return {
        "name": f"from-volume-resume-{index:08d}",
        "parameterAssignments": [
            {"name": "lr", "value": f"0.0{index + 1}"},
            {"name": "momentum", "value": "0.6"},
        ],
    }


def trial(index: int, phase: str = "Succeeded", created: str = "2026-01-01T00:00:00Z") -> Trial:
    return Trial.model_validate(
        {
            "metadata": {
                "name": f"from-volume-resume-{index:08d}",
                "namespace": "kubeflow",
                "uid": f"t{index}",
                "creationTimestamp": created,
                "labels": {"katib.kubeflow.org/experiment": "from-volume-resume"},
            },
            "status": {"conditions": [{"type": phase, "status": "True"}]},
        }
    )


def child(kind: str, **extra: Any) -> dict[str, Any]:
    owner = {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Suggestion",
        "name": "from-volume-resume",
        "uid": "s-uid",
        "controller": True,
    }
    meta = {
        "name": "from-volume-resume-random",
        "namespace": "kubeflow",
        "ownerReferences": [owner],
    }
    return {"kind": kind, "metadata": meta, **extra}


def observed(exp: Experiment, sug: Suggestion, trials: list[Trial], **more: Any) -> Observed:
    """A snapshot with the Suggestion's service up: Deployment available, PVC bound."""
    available = {"conditions": [{"type": "Available", "status": "True"}]}
    return Observed(
        "kubeflow",
        "from-volume-resume",
        exp,
        sug,
        tuple(trials),
        deployment=Deployment.model_validate(child("Deployment", status=available)),
        service=OwnedObject.model_validate(child("Service")),
        pvc=PersistentVolumeClaim.model_validate(
            child("PersistentVolumeClaim", status={"phase": "Bound"})
        ),
        **more,
    )


def planned(state: Observed, config: KatibConfig, now: datetime) -> Plan:
    """``plan`` of a snapshot that needs nothing more from the suggestion service."""
    result = plan(state, config, now)
    assert isinstance(result, Plan), result
    return result


def wanted(state: Observed) -> int:
    """How many assignments the planner asks the service for before it plans ``state``."""
    result = plan(state, shipped_config(), EPOCH)
    return result.count if isinstance(result, NeedAssignments) else 0


def test_trials_are_created_for_unused_assignments_up_to_parallelism() -> None:
    actions = planned(observed(experiment(), suggestion(3, 5), []), shipped_config(), EPOCH).actions
    created = [a.manifest for a in actions if isinstance(a, Create)]
    assert all(m["kind"] == "Trial" for m in created)
    assert [m["metadata"]["name"] for m in created] == [assignment(i)["name"] for i in range(3)]
    assert not any(isinstance(a, UpdateSpec) for a in actions)


def test_requests_grow_when_assignments_run_out() -> None:
    done = [trial(i) for i in range(3)]
    actions = planned(
        observed(experiment(), suggestion(3, 3), done), shipped_config(), EPOCH
    ).actions
    (update,) = [a for a in actions if isinstance(a, UpdateSpec)]
    assert update.spec["requests"] == 6
    assert update.resource_version == "7"


def test_requests_never_exceed_max_trial_count() -> None:
    done = [trial(i) for i in range(11)]
    actions = planned(
        observed(experiment(), suggestion(11, 11), done), shipped_config(), EPOCH
    ).actions
    (update,) = [a for a in actions if isinstance(a, UpdateSpec)]
    assert update.spec["requests"] == 12


def test_the_newest_active_trials_go_when_parallelism_is_lowered() -> None:
    running = [trial(i, "Running", f"2026-01-01T00:00:0{i}Z") for i in range(3)]
    exp = experiment(parallelTrialCount=1)
    actions = planned(observed(exp, suggestion(3, 3), running), shipped_config(), EPOCH).actions
    deleted = [a.ref.name for a in actions if isinstance(a, Delete)]
    assert deleted == [assignment(2)["name"], assignment(1)["name"]]


def test_new_assignments_are_recorded_by_a_running_service() -> None:
    state = observed(experiment(), suggestion(6, 3), [trial(i) for i in range(3)])
    assert wanted(state) == 3
    fresh = tuple(assignment(i) for i in range(3, 6))
    actions = planned(
        observed(experiment(), suggestion(6, 3), [trial(i) for i in range(3)], assignments=fresh),
        shipped_config(),
        EPOCH,
    ).actions
    (status,) = [a for a in actions if isinstance(a, UpdateStatus) and a.ref.kind == "Suggestion"]
    assert status.status["suggestionCount"] == 6
    assert [s["name"] for s in status.status["suggestions"]][-3:] == [a["name"] for a in fresh]


def test_no_assignments_are_wanted_from_a_completed_experiment() -> None:
    raw = experiment().to_dict()
    raw["status"]["conditions"] = [
        *RUNNING_EXPERIMENT,
        {"type": "Succeeded", "status": "True", "reason": "ExperimentMaxTrialsReached"},
    ]
    done = Experiment.model_validate(raw)
    assert wanted(observed(done, suggestion(6, 3), [])) == 0
    assert wanted(observed(experiment(), suggestion(6, 3), [])) == 3


def test_a_trial_renders_the_template_with_its_assignment() -> None:
    manifest = desired_trial(experiment(), assignment(0))
    command = manifest["spec"]["runSpec"]["spec"]["template"]["spec"]["containers"][0]["command"]
    assert "--lr=0.01" in command and "--momentum=0.6" in command
    assert manifest["metadata"]["labels"] == {"katib.kubeflow.org/experiment": "from-volume-resume"}
    assert manifest["metadata"]["ownerReferences"][0]["uid"] == "exp-uid"
    assert manifest["spec"]["parameterAssignments"] == assignment(0)["parameterAssignments"]
    assert manifest["spec"]["primaryContainerName"] == "training-container"


def test_a_trial_carries_what_the_trial_controller_reads() -> None:
    """Katib's getTrialInstance (docs/katib-contract.md#trials): retain, collector, conditions when
    both."""
    from katib_resume.core.katib_trial import JOB_FAILURE_CONDITION, JOB_SUCCESS_CONDITION

    raw = experiment().to_dict()
    template = raw["spec"]["trialTemplate"]
    template.update(
        retain=True,
        successCondition=JOB_SUCCESS_CONDITION,
        failureCondition=JOB_FAILURE_CONDITION,
        primaryPodLabels={"role": "master"},
    )
    raw["spec"]["metricsCollectorSpec"] = {"collector": {"kind": "Push"}}
    spec = desired_trial(Experiment.model_validate(raw), assignment(0))["spec"]
    assert spec["retainRun"] is True
    assert spec["metricsCollector"] == {"collector": {"kind": "Push"}}
    assert spec["primaryPodLabels"] == {"role": "master"}
    assert (spec["successCondition"], spec["failureCondition"]) == (
        JOB_SUCCESS_CONDITION,
        JOB_FAILURE_CONDITION,
    )
    del template["failureCondition"]
    spec = desired_trial(Experiment.model_validate(raw), assignment(0))["spec"]
    assert "successCondition" not in spec, "copied only when both are given"
