"""The Trial: only its labels, owner and conditions matter to the resume lifecycle."""

from __future__ import annotations

from typing import Literal

from core.conditions import Conditions
from core.katib import API_VERSION
from core.kube import KubeModel
from core.model.meta import ObjectMeta


class TrialStatus(KubeModel):
    conditions: Conditions = ()


class Trial(KubeModel):
    api_version: Literal["kubeflow.org/v1beta1"] = API_VERSION
    kind: Literal["Trial"] = "Trial"
    metadata: ObjectMeta
    status: TrialStatus = TrialStatus()
