"""Typed models of Katib's resources and of the objects a Suggestion owns."""

from katib_resume.core.kube import KubeModel, KubeTime
from katib_resume.core.manifest import Manifest, format_time
from katib_resume.core.model.children import (
    Deployment,
    OwnedObject,
    PersistentVolume,
    PersistentVolumeClaim,
)
from katib_resume.core.model.experiment import (
    AlgorithmSpec,
    Experiment,
    ExperimentSpec,
    ExperimentStatus,
)
from katib_resume.core.model.meta import ObjectMeta, OwnerReference
from katib_resume.core.model.suggestion import Suggestion, SuggestionSpec, SuggestionStatus
from katib_resume.core.model.trial import Trial

__all__ = [
    "AlgorithmSpec",
    "Deployment",
    "Experiment",
    "ExperimentSpec",
    "ExperimentStatus",
    "KubeModel",
    "KubeTime",
    "Manifest",
    "ObjectMeta",
    "OwnedObject",
    "OwnerReference",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Suggestion",
    "SuggestionSpec",
    "SuggestionStatus",
    "Trial",
    "format_time",
]
