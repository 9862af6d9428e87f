"""A PV pre-bound to our claim's name is used only if it is ours or provisioned for the claim.

The rules of ``core.prebound`` one by one, then the planner: a Running Suggestion whose PVC is
bound to a foreign PV is Blocked with a message naming the PV, and a Created one never creates
the PVC that such a PV would catch, in either volume mode.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.actions import Create, UpdateStatus
from katib_resume.core.config import KatibConfig
from katib_resume.core.katib import ANNOTATION_OWNER, ANNOTATION_OWNER_UID
from katib_resume.core.model import PersistentVolume, PersistentVolumeClaim, Suggestion
from katib_resume.core.observed import Observed
from katib_resume.core.plan import Plan, plan
from katib_resume.core.prebound import (
    ANNOTATION_PROVISIONED_BY,
    claimants,
    prebound_conflicts,
    usable,
)
from katib_resume.core.volumes import volume_plan
from tests.support.harness import shipped_config
from tests.unit.test_provision import experiment, observed, suggestion

NS, CLAIM, SUG_UID, PVC_UID = "kubeflow", "from-volume-resume-random", "s-uid", "pvc-uid"
LOCAL = {"persistentVolumeClaimSpec": {"storageClassName": "katib-suggestion"}}


def pv(name: str = "foreign", uid: str | None = None, **annotations: str) -> PersistentVolume:
    ref: dict[str, Any] = {"namespace": NS, "name": CLAIM}
    if uid is not None:
        ref["uid"] = uid
    meta = {"name": name, "annotations": annotations}
    return PersistentVolume.model_validate({"metadata": meta, "spec": {"claimRef": ref}})


def pvc(volume: str | None = None, phase: str = "Bound") -> PersistentVolumeClaim:
    owner = {"apiVersion": "kubeflow.org/v1beta1", "kind": "Suggestion", "name": "x"}
    meta: dict[str, Any] = {"name": CLAIM, "namespace": NS, "uid": PVC_UID}
    meta["ownerReferences"] = [{**owner, "uid": SUG_UID, "controller": True}]
    spec = {"volumeName": volume} if volume else {}
    return PersistentVolumeClaim.model_validate(
        {"metadata": meta, "spec": spec, "status": {"phase": phase}}
    )


def test_a_claim_ref_names_the_claim_by_namespace_name_and_no_other_uid() -> None:
    volumes = [pv("a"), pv("b", uid=PVC_UID), pv("c", uid="an-earlier-claim")]
    other = PersistentVolume.model_validate(
        {"metadata": {"name": "d"}, "spec": {"claimRef": {"namespace": "elsewhere", "name": CLAIM}}}
    )
    names = [v.metadata.name for v in claimants([*volumes, other], NS, CLAIM, pvc())]
    assert names == ["a", "b"]
    assert [v.metadata.name for v in claimants(volumes, NS, CLAIM, None)] == ["a"]


def test_a_terminating_pv_is_no_claimant() -> None:
    going = pv().model_copy(
        update={"metadata": pv().metadata.model_copy(update={"deletion_timestamp": EPOCH})}
    )
    assert claimants([going], NS, CLAIM, None) == ()


def test_ours_by_annotation_or_provisioned_for_this_very_claim_is_usable() -> None:
    assert usable(pv(**{ANNOTATION_OWNER_UID: SUG_UID}), None, SUG_UID)
    assert not usable(pv(**{ANNOTATION_OWNER_UID: "another"}), None, SUG_UID)
    assert not usable(pv(**{ANNOTATION_OWNER_UID: ""}), None, "")
    provisioned = {ANNOTATION_PROVISIONED_BY: "some.provisioner"}
    assert usable(pv(uid=PVC_UID, **provisioned), pvc(), SUG_UID)
    assert not usable(pv(uid=PVC_UID, **provisioned), None, SUG_UID)
    assert not usable(pv(uid="another-claim", **provisioned), pvc(), SUG_UID)
    assert not usable(pv(**provisioned), pvc(), SUG_UID)  # pre-bound by name only: not ours
    assert not usable(pv(uid=PVC_UID), pvc(), SUG_UID)  # bound, but nobody provisioned it


def _plan_of(config: KatibConfig) -> Any:
    return volume_plan(suggestion(3, 0), config.suggestion("random"))


def test_each_foreign_claimant_is_named_pre_bound_or_bound() -> None:
    plan_ = _plan_of(shipped_config())
    holder = {ANNOTATION_OWNER: "other/exp", ANNOTATION_OWNER_UID: "u2"}
    found = prebound_conflicts(plan_, [pv("free"), pv("held", **holder)], None, SUG_UID)
    assert found == [
        f"PersistentVolume free is pre-bound to PersistentVolumeClaim {NS}/{CLAIM} without the "
        f"{ANNOTATION_OWNER_UID} annotation of Suggestion {NS}/from-volume-resume "
        f"(uid {SUG_UID}); it is not used",
        f"PersistentVolume held is pre-bound to PersistentVolumeClaim {NS}/{CLAIM} but belongs "
        f"to other/exp (uid u2), not to Suggestion {NS}/from-volume-resume (uid {SUG_UID}); "
        "it is not used",
    ]
    bound = prebound_conflicts(plan_, [pv("free", uid=PVC_UID)], pvc("free"), SUG_UID)
    assert bound[0].startswith("PersistentVolume free is bound to PersistentVolumeClaim")


def test_the_pv_of_our_own_name_is_left_to_the_volume_check() -> None:
    plan_ = _plan_of(shipped_config(**LOCAL))
    assert plan_.volume is not None
    assert prebound_conflicts(plan_, [pv(plan_.volume.name)], None, SUG_UID) == []


def _created(sug: Suggestion) -> Suggestion:
    created = [{"type": "Created", "status": "True", "reason": "SuggestionCreated"}]
    status = {**sug.status.to_dict(), "conditions": created}
    return Suggestion.model_validate({**sug.to_dict(), "status": status})


def _ready(result: Plan) -> dict[str, Any]:
    (write,) = [
        a for a in result.actions if isinstance(a, UpdateStatus) and a.ref.kind == "Suggestion"
    ]
    return next(c for c in write.status["conditions"] if c["type"] == "DeploymentReady")


@pytest.mark.parametrize("entry", [{}, LOCAL], ids=["provisioned", "local"])
def test_a_created_suggestion_is_blocked_before_it_makes_a_claim(entry: dict[str, Any]) -> None:
    sug = _created(suggestion(0, 0))
    state = Observed(NS, "from-volume-resume", experiment(), sug, claimants=(pv(),))
    result = plan(state, shipped_config(**entry), EPOCH)
    assert isinstance(result, Plan) and result.suggestion is not None
    assert result.suggestion.after.value == "Blocked"
    assert not [a for a in result.actions if isinstance(a, Create)]
    ready = _ready(result)
    assert (ready["reason"], ready["status"]) == ("OwnershipConflict", "False")
    assert ready["message"].startswith("PersistentVolume foreign is pre-bound to")
    clean = plan(replace(state, claimants=()), shipped_config(**entry), EPOCH)
    assert isinstance(clean, Plan) and clean.suggestion is not None
    assert clean.suggestion.after.value == "Deploying"


def test_a_running_suggestion_bound_to_a_foreign_pv_is_blocked() -> None:
    state = observed(experiment(), suggestion(3, 3), [])
    state = replace(state, pvc=pvc("foreign"), claimants=(pv(uid=PVC_UID),))
    result = plan(state, shipped_config(), EPOCH)
    assert isinstance(result, Plan) and result.suggestion is not None
    assert result.suggestion.after.value == "Blocked"
    assert "PersistentVolume foreign is bound to" in _ready(result)["message"]
    provisioned = pv(uid=PVC_UID, **{ANNOTATION_PROVISIONED_BY: "p"})
    fine = plan(replace(state, claimants=(provisioned,)), shipped_config(), EPOCH)
    assert isinstance(fine, Plan) and fine.suggestion is not None
    assert fine.suggestion.after.value == "Running"
