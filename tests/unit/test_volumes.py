"""The FromVolume volume plan: Katib's TestDesiredVolume, our four fixes, and ownership checks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from katib_resume.core.config import SuggestionConfig, parse_katib_config
from katib_resume.core.model import PersistentVolume, PersistentVolumeClaim, Suggestion
from katib_resume.core.volumes import (
    VolumePlan,
    claim_conflict,
    per_volume_path,
    volume_conflict,
    volume_plan,
)

UID = "uid-suggestion"
OWNER = {
    "apiVersion": "kubeflow.org/v1beta1",
    "kind": "Suggestion",
    "name": "test-suggestion",
    "uid": UID,
    "controller": True,
    "blockOwnerDeletion": True,
}
PV_NAME = "test-suggestion-random-kubeflow"
CLAIM_REF = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "namespace": "kubeflow",
    "name": "test-suggestion-random",
}
DEFAULT_CLAIM_SPEC = {
    "accessModes": ["ReadWriteOnce"],
    "resources": {"requests": {"storage": "1Gi"}},
}
KATIB_PV_SPEC = {  # TestDesiredVolume 4, hostPath as written there (sic)
    "storageClassName": "test-storage-class",
    "persistentVolumeReclaimPolicy": "Retain",
    "accessModes": ["ReadWriteOnce"],
    "hostPath": {"path": "tmp/katib/suggestiontest-suggestion-random-kubeflow"},
    "capacity": {"storage": "1Gi"},
}


def make_suggestion(uid: str | None = UID) -> Suggestion:
    metadata: dict[str, Any] = {"name": "test-suggestion", "namespace": "kubeflow"}
    if uid is not None:
        metadata["uid"] = uid
    spec = {"algorithm": {"algorithmName": "random"}, "resumePolicy": "FromVolume"}
    return Suggestion.model_validate({"metadata": metadata, "spec": spec})


def entry(**fields: Any) -> SuggestionConfig:
    data = {"algorithmName": "random", "image": "test-image", **fields}
    katib = parse_katib_config(
        {
            "apiVersion": "config.kubeflow.org/v1beta1",
            "kind": "KatibConfig",
            "runtime": {"suggestions": [data]},
        }
    )
    return katib.suggestion("random")


def custom_entry(**pv: Any) -> SuggestionConfig:
    return entry(
        persistentVolumeClaimSpec={**DEFAULT_CLAIM_SPEC, "storageClassName": "test-storage-class"},
        persistentVolumeSpec={**KATIB_PV_SPEC, **pv},
        persistentVolumeLabels={"type": "local"},
    )


def test_desired_volume_valid_run_with_default_pvc() -> None:
    plan = volume_plan(make_suggestion(), entry())
    assert plan.volume is None
    assert plan.claim.manifest() == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "test-suggestion-random",
            "namespace": "kubeflow",
            "ownerReferences": [OWNER],
        },
        "spec": DEFAULT_CLAIM_SPEC,  # no storageClassName, no volumeName: dynamic provisioning
    }


def test_custom_pvc_and_pv() -> None:
    plan = volume_plan(make_suggestion(), custom_entry())
    assert plan.claim.manifest()["spec"] == {
        **DEFAULT_CLAIM_SPEC,
        "storageClassName": "test-storage-class",
        "volumeName": PV_NAME,  # ours: pre-bound
    }
    assert plan.volume is not None
    assert plan.volume.manifest() == {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": PV_NAME,
            "labels": {"type": "local"},
            "annotations": {  # ours: the owner is recorded here, never as an ownerReference
                "resume.katib.kubeflow.org/owner": "kubeflow/test-suggestion",
                "resume.katib.kubeflow.org/owner-uid": UID,
            },
        },
        "spec": {
            **KATIB_PV_SPEC,
            "persistentVolumeReclaimPolicy": "Delete",
            # Deliberately unlike Katib, which uses the configured path verbatim (so every
            # Experiment shares one directory): the configured path is a prefix, and the PV
            # gets its own directory under it.
            "hostPath": {"path": f"tmp/katib/suggestiontest-suggestion-random-kubeflow/{PV_NAME}"},
            "claimRef": CLAIM_REF,  # ours: pre-bound
        },
    }


def test_rule_a_pv_and_pvc_are_pre_bound_to_each_other() -> None:
    plan = volume_plan(make_suggestion(), custom_entry())
    assert plan.volume is not None
    claim, volume = plan.claim.manifest(), plan.volume.manifest()
    assert claim["spec"]["volumeName"] == volume["metadata"]["name"]
    assert volume["spec"]["claimRef"] == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": claim["metadata"]["namespace"],
        "name": claim["metadata"]["name"],
    }


def test_rule_a_a_configured_claim_ref_is_replaced() -> None:
    other = {"namespace": "elsewhere", "name": "theirs"}
    plan = volume_plan(make_suggestion(), custom_entry(claimRef=other))
    assert plan.volume is not None
    assert plan.volume.manifest()["spec"]["claimRef"] == CLAIM_REF


@pytest.mark.parametrize("uid", [UID, None], ids=["created", "preview"])
def test_rule_b_the_pv_has_no_owner_reference_but_owner_annotations(uid: str | None) -> None:
    plan = volume_plan(make_suggestion(uid), custom_entry())
    assert plan.volume is not None
    metadata = plan.volume.manifest()["metadata"]
    assert "ownerReferences" not in metadata
    assert metadata["annotations"]["resume.katib.kubeflow.org/owner"] == "kubeflow/test-suggestion"
    assert metadata["annotations"].get("resume.katib.kubeflow.org/owner-uid") == uid


@pytest.mark.parametrize(
    ("configured", "expected"),
    [
        ("/tmp/katib/suggestions/", f"/tmp/katib/suggestions/{PV_NAME}"),
        ("/tmp/katib/suggestions", f"/tmp/katib/suggestions/{PV_NAME}"),
        ("/data//", f"/data/{PV_NAME}"),
        ("/data/BOX/", f"/data/BOX/{PV_NAME}"),  # only slashes are trimmed
        ("/", f"/{PV_NAME}"),
    ],
)
def test_rule_c_host_path_is_a_prefix(configured: str, expected: str) -> None:
    plan = volume_plan(make_suggestion(), custom_entry(hostPath={"path": configured}))
    assert plan.volume is not None
    assert plan.volume.manifest()["spec"]["hostPath"] == {"path": expected}


def test_rule_c_other_volume_sources_are_verbatim() -> None:
    nfs = {"server": "nfs.local", "path": "/exports/katib"}
    pv = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"], "nfs": nfs}
    plan = volume_plan(make_suggestion(), entry(persistentVolumeSpec=pv))
    assert plan.volume is not None
    spec = plan.volume.manifest()["spec"]
    assert spec["nfs"] == nfs
    assert "hostPath" not in spec
    assert plan.volume.manifest()["metadata"].get("labels") is None


@given(
    prefix=st.text(st.sampled_from("abc/"), max_size=12),
    first=st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True),
    second=st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True),
)
def test_rule_c_distinct_pv_names_get_distinct_directories(
    prefix: str, first: str, second: str
) -> None:
    assume(first != second)
    one, two = per_volume_path(prefix, first), per_volume_path(prefix, second)
    assert one != two
    assert one.endswith(f"/{first}")
    assert not one.startswith(two + "/")
    assert not two.startswith(one + "/")


@pytest.mark.parametrize("uid", [UID, None], ids=["created", "preview"])
def test_rule_d_the_pvc_is_controlled_by_the_suggestion(uid: str | None) -> None:
    plan = volume_plan(make_suggestion(uid), entry())
    (reference,) = plan.claim.manifest()["metadata"]["ownerReferences"]
    expected = {k: v for k, v in OWNER.items() if uid or k != "uid"}
    assert reference == expected


def test_manifests_are_fresh_copies() -> None:
    plan = volume_plan(make_suggestion(), custom_entry())
    assert plan.volume is not None
    plan.claim.manifest()["spec"]["resources"]["requests"]["storage"] = "9Gi"
    plan.volume.manifest()["spec"]["hostPath"]["path"] = "/elsewhere"
    again = volume_plan(make_suggestion(), custom_entry())
    assert plan == again
    assert plan.claim.manifest()["spec"]["resources"]["requests"]["storage"] == "1Gi"


def pvc(owner_uid: str | None = UID, volume_name: str | None = None) -> PersistentVolumeClaim:
    metadata: dict[str, Any] = {"name": "test-suggestion-random", "namespace": "kubeflow"}
    if owner_uid is not None:
        metadata["ownerReferences"] = [{**OWNER, "uid": owner_uid}]
    spec = {"volumeName": volume_name} if volume_name else {}
    return PersistentVolumeClaim.model_validate({"metadata": metadata, "spec": spec})


def pv(owner_uid: str | None = UID, claim: tuple[str, str] | None = None) -> PersistentVolume:
    annotations = {"resume.katib.kubeflow.org/owner": "other-ns/other"}
    if owner_uid is not None:
        annotations["resume.katib.kubeflow.org/owner-uid"] = owner_uid
    spec = {"claimRef": {"namespace": claim[0], "name": claim[1]}} if claim else {}
    data = {"metadata": {"name": PV_NAME, "annotations": annotations}, "spec": spec}
    return PersistentVolume.model_validate(data)


WITH_PV = volume_plan(make_suggestion(), custom_entry())
WITHOUT_PV = volume_plan(make_suggestion(), entry())
OURS = ("kubeflow", "test-suggestion-random")


@pytest.mark.parametrize(
    ("plan", "observed", "problem"),
    [
        pytest.param(WITH_PV, None, None, id="absent"),
        pytest.param(WITH_PV, pvc(), None, id="ours, not yet bound"),
        pytest.param(WITH_PV, pvc(volume_name=PV_NAME), None, id="ours, bound to our PV"),
        pytest.param(WITHOUT_PV, pvc(volume_name="pvc-1234"), None, id="ours, provisioned"),
        pytest.param(WITH_PV, pvc(owner_uid=None), "without a controller owner", id="no owner"),
        pytest.param(
            WITH_PV, pvc(owner_uid="uid-other"), "controlled by uid uid-other", id="other"
        ),
        pytest.param(WITH_PV, pvc(owner_uid=""), "without a controller owner", id="empty uid"),
        pytest.param(
            WITH_PV,
            pvc(volume_name="someone-elses"),
            "bound to PersistentVolume someone-elses",
            id="pre-bound to another PV",
        ),
    ],
)
def test_claim_conflict(
    plan: VolumePlan, observed: PersistentVolumeClaim | None, problem: str | None
) -> None:
    message = claim_conflict(plan, observed, UID)
    if problem is None:
        assert message is None
    else:
        assert message is not None
        assert "PersistentVolumeClaim kubeflow/test-suggestion-random" in message
        assert problem in message


@pytest.mark.parametrize(
    ("plan", "observed", "problem"),
    [
        pytest.param(WITH_PV, None, None, id="absent"),
        pytest.param(WITH_PV, pv(), None, id="ours, unbound"),
        pytest.param(WITH_PV, pv(claim=OURS), None, id="ours, claimed by our PVC"),
        pytest.param(WITHOUT_PV, pv(owner_uid=None), None, id="no PV wanted"),
        pytest.param(WITH_PV, pv(owner_uid=None), "without the resume.katib", id="no annotation"),
        pytest.param(
            WITH_PV,
            pv(owner_uid="uid-other"),
            "belongs to other-ns/other (uid uid-other)",
            id="another Suggestion's",
        ),
        pytest.param(
            WITH_PV,
            pv(claim=("kubeflow", "theirs")),
            "claimed by PersistentVolumeClaim kubeflow/theirs",
            id="claimed by another PVC",
        ),
        pytest.param(
            WITH_PV,
            pv(claim=("other", "test-suggestion-random")),
            "claimed by PersistentVolumeClaim other/test-suggestion-random",
            id="claimed by a same-named PVC elsewhere",
        ),
    ],
)
def test_volume_conflict(
    plan: VolumePlan, observed: PersistentVolume | None, problem: str | None
) -> None:
    message = volume_conflict(plan, observed, UID)
    if problem is None:
        assert message is None
    else:
        assert message is not None
        assert f"PersistentVolume {PV_NAME}" in message
        assert problem in message


def test_without_a_uid_nothing_observed_can_be_ours() -> None:
    assert claim_conflict(WITH_PV, pvc(), None) is not None
    assert volume_conflict(WITH_PV, pv(), None) is not None


CLAIM = "PersistentVolumeClaim kubeflow/test-suggestion-random"
VOLUME = f"PersistentVolume {PV_NAME}"
US = "Suggestion kubeflow/test-suggestion (uid uid-suggestion)"


@pytest.mark.parametrize(
    ("observed", "uid", "text"),
    [
        (
            pvc(owner_uid=None),
            UID,
            f"{CLAIM} already exists without a controller owner; it is not adopted by {US}",
        ),
        (
            pvc(owner_uid="uid-other"),
            UID,
            f"{CLAIM} already exists and is controlled by uid uid-other, not by {US}",
        ),
        (
            pvc(volume_name="someone-elses"),
            UID,
            f"{CLAIM} is bound to PersistentVolume someone-elses, not to {PV_NAME}",
        ),
        (
            pvc(),
            None,
            f"{CLAIM} already exists and is controlled by uid uid-suggestion, not by "
            "Suggestion kubeflow/test-suggestion (no uid yet)",
        ),
    ],
)
def test_claim_conflicts_say_what_is_owned_by_whom(
    observed: PersistentVolumeClaim, uid: str | None, text: str
) -> None:
    assert claim_conflict(WITH_PV, observed, uid) == text


def test_volume_conflicts_say_what_is_owned_by_whom() -> None:
    missing = (
        f"{VOLUME} already exists without the resume.katib.kubeflow.org/owner-uid annotation; "
        f"it is not adopted by {US}"
    )
    assert volume_conflict(WITH_PV, pv(owner_uid=None), UID) == missing
    theirs = f"{VOLUME} already exists and belongs to other-ns/other (uid uid-other), not to {US}"
    assert volume_conflict(WITH_PV, pv(owner_uid="uid-other"), UID) == theirs
    claimed = (
        f"{VOLUME} is claimed by PersistentVolumeClaim kubeflow/theirs, "
        "not by kubeflow/test-suggestion-random"
    )
    assert volume_conflict(WITH_PV, pv(claim=("kubeflow", "theirs")), UID) == claimed
    annotations = {"resume.katib.kubeflow.org/owner-uid": "uid-other"}
    unnamed = PersistentVolume.model_validate(
        {"metadata": {"name": PV_NAME, "annotations": annotations}, "spec": {}}
    )
    assert volume_conflict(WITH_PV, unnamed, UID) == (
        f"{VOLUME} already exists and belongs to another Suggestion (uid uid-other), not to {US}"
    )
