"""Katib's defaults for an inline trial template, by the kind of its run object (the mutating
webhook's ``setDefaultTrialTemplate``, docs/katib-contract.md#defaulting).

Admission requires a template to give both a ``successCondition`` and a ``failureCondition``
(``core.template_rules``); for the kinds Katib knows, these defaults give them. Each is filled
only when empty, and only for a template with an inline ``trialSpec``; a value of the wrong shape
is left for admission to judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from katib_resume.core.katib_trial import JOB_FAILURE_CONDITION, JOB_SUCCESS_CONDITION

KUBEFLOW_SUCCESS_CONDITION: Final = 'status.conditions.#(type=="Succeeded")#|#(status=="True")#'
KUBEFLOW_JOB_KINDS: Final = frozenset({"TFJob", "PyTorchJob", "XGBoostJob", "MPIJob"})
KUBEFLOW_PRIMARY_POD_LABELS: Final = {"training.kubeflow.org/job-role": "master"}
TRAINJOB_PRIMARY_POD_LABELS: Final = {
    "jobset.sigs.k8s.io/replicatedjob-name": "node",
    "batch.kubernetes.io/job-completion-index": "0",
}

_DEFAULTS: Final[Mapping[str, tuple[str, str, Mapping[str, str] | None]]] = {
    "Job": (JOB_SUCCESS_CONDITION, JOB_FAILURE_CONDITION, None),
    "TrainJob": (JOB_SUCCESS_CONDITION, JOB_FAILURE_CONDITION, TRAINJOB_PRIMARY_POD_LABELS),
    **{
        kind: (KUBEFLOW_SUCCESS_CONDITION, JOB_FAILURE_CONDITION, KUBEFLOW_PRIMARY_POD_LABELS)
        for kind in KUBEFLOW_JOB_KINDS
    },
}


def default_template(template: object) -> dict[str, Any] | None:
    """The defaulted ``trialTemplate``, or None when it needs nothing."""
    if not isinstance(template, Mapping):
        return None
    run = template.get("trialSpec")
    kind = run.get("kind") if isinstance(run, Mapping) else None
    if not isinstance(kind, str) or kind not in _DEFAULTS:
        return None
    success, failure, labels = _DEFAULTS[kind]
    added: dict[str, Any] = {}
    if not template.get("successCondition"):
        added["successCondition"] = success
    if not template.get("failureCondition"):
        added["failureCondition"] = failure
    if labels is not None and template.get("primaryPodLabels") is None:
        added["primaryPodLabels"] = dict(labels)
    return {**template, **added} if added else None
