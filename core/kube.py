"""The base of every resource model: Katib's camelCase JSON, frozen, and loss-free.

Resources are parsed from Katib's own YAML (``kubeflow.org/v1beta1``). The lifecycle reads a few
fields; every other field (``trialSpec``, ``parameters``, fields added by a newer Katib) is kept
as an extra and written back untouched, so a round trip through these models loses nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel

from katib_resume.core.manifest import Manifest, format_time

KubeTime = Annotated[datetime, PlainSerializer(format_time, return_type=str, when_used="json")]


class KubeModel(BaseModel):
    """Frozen, camelCase, extra-preserving model of (part of) a Kubernetes object."""

    model_config = ConfigDict(
        extra="allow",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        ser_json_inf_nan="constants",
    )

    def to_dict(self, exclude: set[str] | None = None) -> Manifest:
        """The object as Kubernetes JSON: only the fields that were given or set, extras kept
        (``exclude``: fields, by their Python names, left out)."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json", exclude=exclude)
