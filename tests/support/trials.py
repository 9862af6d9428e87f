"""Trial fixtures shaped like Katib's ``newFakeTrialBatchJob``
(docs/katib-contract.md#trial-controller-tests)."""

from __future__ import annotations

from typing import Any

from katib_resume.core.katib_trial import JOB_FAILURE_CONDITION, JOB_SUCCESS_CONDITION
from katib_resume.core.manifest import Manifest


def batch_job(name: str = "", namespace: str = "default") -> Manifest:
    container = {
        "name": "training-container",
        "image": "docker.io/kubeflowkatib/pytorch-mnist-cpu",
        "command": ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"],
    }
    metadata: dict[str, Any] = {"namespace": namespace}
    if name:
        metadata["name"] = name
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "template": {"spec": {"containers": [container], "restartPolicy": "Never"}},
        },
    }


def new_trial(
    name: str,
    collector: str = "StdOut",
    namespace: str = "default",
    *,
    run: Manifest | None = None,
    retain: bool = False,
) -> Manifest:
    return {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Trial",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{namespace}-{name}",
            "labels": {"katib.kubeflow.org/experiment": "exp"},
        },
        "spec": {
            "objective": {
                "type": "maximize",
                "objectiveMetricName": "accuracy",
                "metricStrategies": [{"name": "accuracy", "value": "max"}],
            },
            "runSpec": run if run is not None else batch_job(name, namespace),
            "primaryContainerName": "training-container",
            "successCondition": JOB_SUCCESS_CONDITION,
            "failureCondition": JOB_FAILURE_CONDITION,
            "metricsCollector": {"collector": {"kind": collector}},
            "retainRun": retain,
        },
    }


def job_status(*conditions: tuple[str, str], reason: str = "", message: str = "") -> Manifest:
    return {
        "conditions": [
            {"type": type_, "status": status, "reason": reason, "message": message}
            for type_, status in conditions
        ]
    }


EXAMPLE_PLACEHOLDERS = [
    "--lr=${trialParameters.learningRate}",
    "--momentum=${trialParameters.momentum}",
]
"""The example's trial parameters as a container's ``args``: a test that replaces the example's
training command keeps them, as admission requires every trial parameter to be used."""


def run_instead(container: dict[str, Any], command: list[str]) -> None:
    """Make the example's training container run ``command``, its trial parameters passed as
    ``args`` after it (``sh -c`` takes them as ``$0`` and ``$1``)."""
    container["command"] = command
    container["args"] = list(EXAMPLE_PLACEHOLDERS)
