"""The Trial (``kubeflow.org/v1beta1``): what the Experiment counts and the trial planner reads.

``status.observation`` stays an extra (``core.objective`` reads it as Katib's JSON); the spec
fields the trial controller reads are typed, every other field is kept and written back.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from katib_resume.core.conditions import Conditions
from katib_resume.core.katib import API_VERSION
from katib_resume.core.kube import KubeModel, KubeTime
from katib_resume.core.manifest import Manifest
from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.model.meta import ObjectMeta


class TrialSpec(KubeModel):
    objective: ObjectiveSpec | None = None
    parameter_assignments: tuple[dict[str, Any], ...] = ()
    run_spec: Manifest | None = None
    retain_run: bool = False
    metrics_collector: Manifest = Field(default_factory=dict)
    success_condition: str = ""
    failure_condition: str = ""

    @property
    def collector_kind(self) -> str:
        """``metricsCollector.collector.kind``, ``StdOut`` when unset (the webhook's default)."""
        collector = self.metrics_collector.get("collector") or {}
        return str(collector.get("kind") or "StdOut")


class TrialStatus(KubeModel):
    conditions: Conditions = ()
    start_time: KubeTime | None = None
    completion_time: KubeTime | None = None


class Trial(KubeModel):
    api_version: Literal["kubeflow.org/v1beta1"] = API_VERSION
    kind: Literal["Trial"] = "Trial"
    metadata: ObjectMeta
    spec: TrialSpec = TrialSpec()
    status: TrialStatus = TrialStatus()

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"
