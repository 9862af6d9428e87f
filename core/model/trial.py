"""The Trial: only its labels, owner and conditions matter to the resume lifecycle."""

from __future__ import annotations

from typing import Literal

from katib_resume.core.conditions import Conditions
from katib_resume.core.katib import API_VERSION
from katib_resume.core.kube import KubeModel
from katib_resume.core.model.meta import ObjectMeta


class TrialStatus(KubeModel):
    conditions: Conditions = ()


class Trial(KubeModel):
    api_version: Literal["kubeflow.org/v1beta1"] = API_VERSION
    kind: Literal["Trial"] = "Trial"
    metadata: ObjectMeta
    status: TrialStatus = TrialStatus()
