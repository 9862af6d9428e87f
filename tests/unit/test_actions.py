"""What a plan asks the shell to do (``core.actions``): references, finalizer lists, writes."""

from __future__ import annotations

import dataclasses

import pytest

from katib_resume.core.actions import (
    AddFinalizer,
    Create,
    Delete,
    ObjectRef,
    RecordEvent,
    RemoveFinalizer,
    Requeue,
    UpdateSpec,
    UpdateStatus,
    writes,
)

PVC = ObjectRef("v1", "PersistentVolumeClaim", "ns", "claim")
PV = ObjectRef("v1", "PersistentVolume", None, "volume")


def test_a_reference_names_kind_namespace_and_name() -> None:
    assert str(PVC) == "PersistentVolumeClaim ns/claim"
    assert str(PV) == "PersistentVolume volume"  # cluster-scoped: no namespace


def test_a_reference_is_read_from_a_manifest() -> None:
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim"}
    assert ObjectRef.of(claim | {"metadata": {"name": "claim", "namespace": "ns"}}) == PVC
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "volume"}}
    assert Create(volume).ref == PV


def test_finalizers_are_added_at_the_end_and_removed_everywhere() -> None:
    present = ("a", "ours", "b", "ours")
    assert AddFinalizer(PVC, "ours", ("a", "b"), "7").finalizers == ("a", "b", "ours")
    assert RemoveFinalizer(PVC, "ours", present, "7").finalizers == ("a", "b")


def test_only_writes_change_the_cluster() -> None:
    plan = (
        RecordEvent(PVC, "Normal", "Created", "made"),
        Create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "volume"}}),
        Requeue(1.0, "waiting"),
        Delete(PV, "uid"),
        AddFinalizer(PVC, "f", (), None),
        RemoveFinalizer(PVC, "f", ("f",), None),
        UpdateSpec(PVC, {}, None),
        UpdateStatus(PVC, {}, "1"),
    )
    assert writes(plan) == plan[1:2] + plan[3:]


ACTIONS = [
    PVC,
    Create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "volume"}}),
    Delete(PV, "uid"),
    AddFinalizer(PVC, "f", (), None),
    RemoveFinalizer(PVC, "f", ("f",), None),
    UpdateStatus(PVC, {}, "1"),
    UpdateSpec(PVC, {}, None),
    RecordEvent(PVC, "Warning", "R", "m"),
    Requeue(1.0, "waiting"),
]


@pytest.mark.parametrize("action", ACTIONS, ids=lambda action: type(action).__name__)
def test_actions_are_frozen_values(action: object) -> None:
    """Frozen, as the module promises: nothing changes a plan once the planner made it."""
    first = dataclasses.fields(action)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(action, first, "changed")
    assert action == dataclasses.replace(action)  # type: ignore[type-var]
