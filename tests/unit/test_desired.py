"""The Suggestion and the Trials an Experiment owns, as whole manifests
(docs/katib-contract.md#suggestion, docs/katib-contract.md#trials): every field Katib writes, and
nothing more, so that a client reading them sees Katib's objects."""

from __future__ import annotations

from typing import Any

from katib_resume.core.desired import desired_suggestion, desired_trial, experiment_owner
from katib_resume.core.model import Experiment

OWNER = {
    "apiVersion": "kubeflow.org/v1beta1",
    "kind": "Experiment",
    "name": "exp",
    "controller": True,
    "blockOwnerDeletion": True,
    "uid": "exp-uid",
}
TEMPLATE: dict[str, Any] = {
    "primaryContainerName": "main",
    "trialParameters": [
        {"name": "learningRate", "reference": "lr"},
        {"name": "unset", "reference": "missing"},
        {"name": "noReference"},
    ],
    "trialSpec": {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {
            "parallelism": 1,
            "command": ["train", "--lr=${trialParameters.learningRate}"],
            "env": {"LR": "${trialParameters.learningRate}", "X": "${trialParameters.unset}"},
        },
    },
}
OBJECTIVE = {"type": "maximize", "objectiveMetricName": "accuracy"}


def experiment(policy: str = "FromVolume", uid: str | None = "exp-uid", **extra: Any) -> Experiment:
    metadata: dict[str, Any] = {"name": "exp", "namespace": "ns"}
    if uid is not None:
        metadata["uid"] = uid
    metadata.update(extra.pop("metadata", {}))
    spec = {"algorithm": {"algorithmName": "random"}, "resumePolicy": policy, **extra}
    return Experiment.model_validate({"metadata": metadata, "spec": spec})


def test_a_from_volume_suggestion_copies_the_experiment_and_carries_our_finalizer() -> None:
    exp = experiment(
        metadata={"labels": {"team": "a"}, "annotations": {"note": "b"}},
        earlyStopping={"algorithmName": "medianstop"},
    )
    assert desired_suggestion(exp, 4) == {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Suggestion",
        "metadata": {
            "name": "exp",
            "namespace": "ns",
            "ownerReferences": [OWNER],
            "labels": {"team": "a"},
            "annotations": {"note": "b"},
            "finalizers": ["resume.katib.kubeflow.org/pv-cleanup"],
        },
        "spec": {
            "algorithm": {"algorithmName": "random"},
            "requests": 4,
            "resumePolicy": "FromVolume",
            "earlyStopping": {"algorithmName": "medianstop"},
        },
    }


def test_a_suggestion_without_a_volume_labels_or_uid_has_none_of_them() -> None:
    manifest = desired_suggestion(experiment(policy="", uid=None), 1)
    owner = {key: value for key, value in OWNER.items() if key != "uid"}
    assert manifest["metadata"] == {"name": "exp", "namespace": "ns", "ownerReferences": [owner]}
    assert manifest["spec"] == {
        "algorithm": {"algorithmName": "random"},
        "requests": 1,
        "resumePolicy": "Never",
    }
    assert experiment_owner(experiment(uid=None)) == owner


def assignment(**extra: Any) -> dict[str, Any]:
    values = [{"name": "lr", "value": 0.5}, {"name": "momentum", "value": "0.9"}]
    return {"name": "exp-abc", "parameterAssignments": values, **extra}


def test_a_trial_is_the_template_rendered_with_its_assignment() -> None:
    exp = experiment(
        metadata={"labels": {"team": "a"}}, trialTemplate=TEMPLATE, objective=OBJECTIVE
    )
    trial = desired_trial(exp, assignment(labels={"team": "b", "extra": "c"}))
    assert trial == {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Trial",
        "metadata": {
            "name": "exp-abc",
            "namespace": "ns",
            "labels": {"team": "b", "katib.kubeflow.org/experiment": "exp", "extra": "c"},
            "ownerReferences": [OWNER],
        },
        "spec": {
            "parameterAssignments": assignment()["parameterAssignments"],
            "objective": OBJECTIVE,
            "primaryContainerName": "main",
            "runSpec": {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "exp-abc", "namespace": "ns"},  # the Trial's, as Katib's
                "spec": {
                    "parallelism": 1,
                    "command": ["train", "--lr=0.5"],
                    "env": {"LR": "0.5", "X": "${trialParameters.unset}"},
                },
            },
        },
    }
    assert TEMPLATE["trialSpec"]["spec"]["env"]["LR"] == "${trialParameters.learningRate}"


def test_the_experiments_label_wins_over_its_own_labels_and_the_assignments_over_both() -> None:
    exp = experiment(metadata={"labels": {"katib.kubeflow.org/experiment": "other"}})
    labels = desired_trial(exp, assignment())["metadata"]["labels"]
    assert labels == {"katib.kubeflow.org/experiment": "exp"}
    relabelled = assignment(labels={"katib.kubeflow.org/experiment": "mine"})
    labels = desired_trial(exp, relabelled)["metadata"]["labels"]
    assert labels == {"katib.kubeflow.org/experiment": "mine"}


def test_a_trial_without_template_objective_or_rules_has_only_its_assignment() -> None:
    spec = desired_trial(experiment(), assignment(earlyStoppingRules=[]))["spec"]
    assert spec == {"parameterAssignments": assignment()["parameterAssignments"]}


def test_run_fields_are_copied_only_when_given() -> None:
    template = {"retain": False, "primaryPodLabels": {}, "successCondition": "ok"}
    spec = desired_trial(experiment(trialTemplate=template), assignment())["spec"]
    assert spec == {
        "parameterAssignments": assignment()["parameterAssignments"],
        "retainRun": False,
    }
    not_a_template = desired_trial(experiment(trialTemplate=["x"]), assignment())["spec"]
    assert "runSpec" not in not_a_template
