"""Re-export of ``core.kube`` (the base of every resource model) for the model package."""

from core.kube import KubeModel, KubeTime, Manifest, format_time

__all__ = ["KubeModel", "KubeTime", "Manifest", "format_time"]
