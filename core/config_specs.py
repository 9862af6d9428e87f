"""The Kubernetes spec fragments a katib-config entry carries, with Katib's defaulting
(docs/katib-contract.md#katib-config).

Resource requirements of the suggestion and early-stopping containers, and the PVC and PV specs of
``resumePolicy: FromVolume``. They are typed where Katib's decoder is typed (quantities, access
modes, the reclaim policy, ``hostPath``), so that a bad value fails when the config is loaded,
and everything else is kept as an extra and written back verbatim.

Katib's resource defaulting, reproduced exactly: for cpu, memory and ephemeral-storage, an absent
or zero request/limit takes the default, and a *negative* one removes the entry (the way to ask for
"no limit"). Other resource names (``nvidia.com/gpu``...) are left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from types import MappingProxyType
from typing import Annotated

from pydantic import (
    Field,
    PlainSerializer,
    PlainValidator,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic_core import PydanticCustomError

from katib_resume.core.katib import DEFAULT_ACCESS_MODE, DEFAULT_STORAGE, RECLAIM_POLICY_DELETE
from katib_resume.core.kube import KubeModel
from katib_resume.core.manifest import Manifest
from katib_resume.core.quantity import Quantity, QuantityError, parse_quantity


def _validate(raw: object) -> Quantity:
    try:
        return parse_quantity(raw)
    except QuantityError as error:
        raise PydanticCustomError("quantity", "{problem}", {"problem": str(error)}) from None


QuantityValue = Annotated[
    Quantity, PlainValidator(_validate), PlainSerializer(str, return_type=str)
]
"""A quantity field of a pydantic model: parsed on input, written back as the original text."""


ResourceList = dict[str, QuantityValue]


def _quantities(values: Mapping[str, str]) -> MappingProxyType[str, Quantity]:
    return MappingProxyType({name: parse_quantity(text) for name, text in values.items()})


DEFAULT_REQUESTS = _quantities({"cpu": "50m", "memory": "10Mi", "ephemeral-storage": "500Mi"})
DEFAULT_LIMITS = _quantities({"cpu": "500m", "memory": "100Mi", "ephemeral-storage": "5Gi"})


def _defaulted(given: Mapping[str, Quantity], defaults: Mapping[str, Quantity]) -> ResourceList:
    result = dict(given)
    for name, default in defaults.items():
        current = result.get(name)
        if current is None or current.is_zero:
            result[name] = default
        elif current.sign < 0:
            del result[name]
    return result


def _without_empty(data: Manifest) -> Manifest:
    """Drop the top-level fields Go would omit (``omitempty``): null, empty map, empty list."""
    return {key: value for key, value in data.items() if value not in (None, {}, [])}


class ResourceRequirements(KubeModel):
    """``corev1.ResourceRequirements`` (and ``VolumeResourceRequirements``), quantities checked."""

    requests: ResourceList = Field(default_factory=dict)
    limits: ResourceList = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> Manifest:
        data: Manifest = handler(self)
        return _without_empty(data)

    def with_container_defaults(self) -> ResourceRequirements:
        """Katib's container defaults: zero or absent → default, negative → removed."""
        return self.model_copy(
            update={
                "requests": _defaulted(self.requests, DEFAULT_REQUESTS),
                "limits": _defaulted(self.limits, DEFAULT_LIMITS),
            }
        )


class ClaimSpecConfig(KubeModel):
    """``persistentVolumeClaimSpec``: defaults ``[ReadWriteOnce]`` and ``storage: 1Gi``."""

    access_modes: tuple[str, ...] = ()
    resources: ResourceRequirements = ResourceRequirements()
    storage_class_name: str | None = None
    volume_name: str | None = None

    def with_defaults(self) -> ClaimSpecConfig:
        """Katib's PVC defaults; the storage request only when no request at all is given."""
        requests = self.resources.requests or {"storage": parse_quantity(DEFAULT_STORAGE)}
        return self.model_copy(
            update={
                "access_modes": self.access_modes or (DEFAULT_ACCESS_MODE,),
                "resources": self.resources.model_copy(update={"requests": requests}),
            }
        )

    def spec(self) -> Manifest:
        """The spec as fresh Kubernetes JSON."""
        return _without_empty(self.model_dump(mode="json", by_alias=True, exclude_none=True))


class HostPathConfig(KubeModel):
    path: str
    type: str | None = None


class VolumeSpecConfig(KubeModel):
    """``persistentVolumeSpec``: a PV is wanted only when it is not empty."""

    capacity: ResourceList = Field(default_factory=dict)
    access_modes: tuple[str, ...] = ()
    persistent_volume_reclaim_policy: str | None = None
    storage_class_name: str | None = None
    host_path: HostPathConfig | None = None

    @cached_property
    def is_empty(self) -> bool:
        """Nothing given: Katib's "semantically equal to the empty spec" (no PV is created).

        Kept once computed (the model is frozen): the planner asks on every reconcile."""
        given = self.model_dump(mode="json", exclude_none=True).values()
        return all(value in ("", {}, []) for value in given)

    def with_defaults(self) -> VolumeSpecConfig:
        """A non-empty spec gets ``persistentVolumeReclaimPolicy: Delete``, forced; empty stays."""
        if self.is_empty:
            return self
        return self.model_copy(update={"persistent_volume_reclaim_policy": RECLAIM_POLICY_DELETE})

    def spec(self) -> Manifest:
        """The spec as fresh Kubernetes JSON."""
        return _without_empty(self.model_dump(mode="json", by_alias=True, exclude_none=True))
