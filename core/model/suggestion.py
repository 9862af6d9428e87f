"""The Suggestion (``kubeflow.org/v1beta1``): one per Experiment, same name and namespace."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import field_serializer

from katib_resume.core.conditions import Conditions, is_true
from katib_resume.core.katib import API_VERSION, SuggestionCondition
from katib_resume.core.kube import KubeModel, KubeTime
from katib_resume.core.model.experiment import AlgorithmSetting, AlgorithmSpec
from katib_resume.core.model.meta import ObjectMeta
from katib_resume.core.policy import ResumePolicy


class SuggestionSpec(KubeModel):
    algorithm: AlgorithmSpec
    early_stopping: AlgorithmSpec | None = None
    requests: int = 0
    resume_policy: str | None = None

    @property
    def policy(self) -> ResumePolicy:
        return ResumePolicy.parse(self.resume_policy)


class SuggestionStatus(KubeModel):
    conditions: Conditions = ()
    start_time: KubeTime | None = None
    observed_generation: int | None = None
    suggestion_count: int = 0
    suggestions: tuple[dict[str, Any], ...] = ()
    algorithm_settings: tuple[AlgorithmSetting, ...] = ()

    @field_serializer("suggestions", when_used="json")
    def _listed(self, suggestions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The assignments as JSON's list: the model may hold a store's ``History`` in place
        of the tuple (``core.history``, never validated into it), which the tuple's own
        serializer would refuse; read through ``Sequence``, either is the same list."""
        return list(suggestions)


class Suggestion(KubeModel):
    api_version: Literal["kubeflow.org/v1beta1"] = API_VERSION
    kind: Literal["Suggestion"] = "Suggestion"
    metadata: ObjectMeta
    spec: SuggestionSpec
    status: SuggestionStatus = SuggestionStatus()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"

    @property
    def algorithm(self) -> str:
        return self.spec.algorithm.algorithm_name

    def has(self, type_: str) -> bool:
        """Katib's ``hasCondition`` on this Suggestion."""
        return is_true(self.status.conditions, type_)

    def is_completed(self) -> bool:
        return self.has(SuggestionCondition.SUCCEEDED) or self.has(SuggestionCondition.FAILED)
