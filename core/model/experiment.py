"""The Experiment (``kubeflow.org/v1beta1``): the fields the resume lifecycle reads and writes.

``resumePolicy`` stays the raw string the user wrote, so that admission can deny an invalid value
with Katib's message instead of failing to parse; ``policy`` gives the parsed value. Fields the
lifecycle does not read (``parameters``, ``trialTemplate``, ``metricsCollectorSpec`` ...) are
kept as extras and survive a round trip.
"""

from __future__ import annotations

from typing import Any, Literal

from katib_resume.core.conditions import Conditions, find, is_true
from katib_resume.core.katib import API_VERSION, ExperimentCondition, ExperimentReason
from katib_resume.core.kube import KubeModel, KubeTime
from katib_resume.core.model.meta import ObjectMeta
from katib_resume.core.policy import ResumePolicy


class AlgorithmSetting(KubeModel):
    name: str
    value: str = ""


class AlgorithmSpec(KubeModel):
    algorithm_name: str
    algorithm_settings: tuple[AlgorithmSetting, ...] = ()


class ObjectiveSpec(KubeModel):
    type: str | None = None
    goal: float | None = None
    objective_metric_name: str | None = None
    additional_metric_names: tuple[str, ...] = ()
    metric_strategies: tuple[dict[str, Any], ...] = ()


class ExperimentSpec(KubeModel):
    algorithm: AlgorithmSpec
    early_stopping: AlgorithmSpec | None = None
    objective: ObjectiveSpec | None = None
    parallel_trial_count: int | None = None
    max_trial_count: int | None = None
    max_failed_trial_count: int | None = None
    resume_policy: str | None = None

    @property
    def policy(self) -> ResumePolicy:
        """The parsed policy; raises ``ValueError`` for a value admission would deny."""
        return ResumePolicy.parse(self.resume_policy)


class ExperimentStatus(KubeModel):
    conditions: Conditions = ()
    start_time: KubeTime | None = None
    completion_time: KubeTime | None = None
    observed_generation: int | None = None
    trials: int = 0
    trials_succeeded: int = 0
    trials_failed: int = 0
    trials_killed: int = 0
    trials_pending: int = 0
    trials_running: int = 0
    trials_early_stopped: int = 0
    trial_metrics_unavailable: int = 0


class Experiment(KubeModel):
    api_version: Literal["kubeflow.org/v1beta1"] = API_VERSION
    kind: Literal["Experiment"] = "Experiment"
    metadata: ObjectMeta
    spec: ExperimentSpec
    status: ExperimentStatus = ExperimentStatus()

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"

    def is_succeeded(self) -> bool:
        return is_true(self.status.conditions, ExperimentCondition.SUCCEEDED)

    def is_failed(self) -> bool:
        return is_true(self.status.conditions, ExperimentCondition.FAILED)

    def is_completed(self) -> bool:
        """Katib's one definition of a completed Experiment: Succeeded or Failed."""
        return self.is_succeeded() or self.is_failed()

    def succeeded_reason(self) -> str | None:
        condition = find(self.status.conditions, ExperimentCondition.SUCCEEDED)
        return condition.reason if condition and condition.status == "True" else None

    def completed_by_max_trials(self) -> bool:
        return self.succeeded_reason() == ExperimentReason.MAX_TRIALS_REACHED
