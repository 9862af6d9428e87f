"""Typed models of Katib's resources and of the objects a Suggestion owns."""

from core.kube import KubeModel, KubeTime, Manifest, format_time
from core.model.children import (
    Deployment,
    OwnedObject,
    PersistentVolume,
    PersistentVolumeClaim,
)
from core.model.experiment import AlgorithmSpec, Experiment, ExperimentSpec, ExperimentStatus
from core.model.meta import ObjectMeta, OwnerReference
from core.model.suggestion import Suggestion, SuggestionSpec, SuggestionStatus
from core.model.trial import Trial

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
