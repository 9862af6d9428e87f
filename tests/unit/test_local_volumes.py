"""The seed design's local volume mode: the plan, the config field, and the embedded default."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from katib_resume.core.config import ConfigError, SuggestionConfig, parse_katib_config
from katib_resume.core.defaults import default_experiment
from katib_resume.core.local_volumes import is_local, volume_source, with_local_volumes
from katib_resume.core.model import Experiment, Suggestion
from katib_resume.core.validation import validate
from katib_resume.core.volumes import volume_plan
from tests.support.harness import load

UID = "uid-suggestion"
PV_NAME = "exp-random-team"
CLAIM_NAME = "exp-random"
HEAD = {"apiVersion": "config.kubeflow.org/v1beta1", "kind": "KatibConfig"}
LOCAL_CLAIM = {"storageClassName": "katib-suggestion"}
OWNER_ANNOTATIONS = {
    "resume.katib.kubeflow.org/owner": "team/exp",
    "resume.katib.kubeflow.org/owner-uid": UID,
}
CLAIM_REF = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "namespace": "team",
    "name": CLAIM_NAME,
}


def suggestion() -> Suggestion:
    return Suggestion.model_validate(
        {
            "metadata": {"name": "exp", "namespace": "team", "uid": UID},
            "spec": {"algorithm": {"algorithmName": "random"}, "resumePolicy": "FromVolume"},
        }
    )


def entry(**fields: Any) -> SuggestionConfig:
    data = {"algorithmName": "random", "image": "test-image", **fields}
    return parse_katib_config({**HEAD, "runtime": {"suggestions": [data]}}).suggestion("random")


def local_pv(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """The local PV of ``exp`` (random, namespace team) with the default claim, and ``spec``."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": PV_NAME,
            "labels": labels or {"type": "local"},
            "annotations": OWNER_ANNOTATIONS,
        },
        "spec": {
            "storageClassName": "katib-suggestion",
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"},
            "hostPath": {"path": f"/tmp/katib/suggestions/{PV_NAME}", "type": "DirectoryOrCreate"},
            "persistentVolumeReclaimPolicy": "Delete",
            "claimRef": CLAIM_REF,
            **spec,
        },
    }


# -- the plan, as a table ----------------------------------------------------------------------

PLANS = [
    pytest.param(
        {"persistentVolumeClaimSpec": LOCAL_CLAIM},
        local_pv(),
        id="the default suggestion storage class brings its own PV",
    ),
    pytest.param(
        {
            "persistentVolumeClaimSpec": {
                **LOCAL_CLAIM,
                "accessModes": ["ReadWriteMany"],
                "resources": {"requests": {"storage": "5Gi"}},
            },
        },
        local_pv(accessModes=["ReadWriteMany"], capacity={"storage": "5Gi"}),
        id="the PV has the claim's access modes and size",
    ),
    pytest.param(
        {"persistentVolumeClaimSpec": LOCAL_CLAIM, "localVolumePathPrefix": "/srv/katib/"},
        local_pv(hostPath={"path": f"/srv/katib/{PV_NAME}", "type": "DirectoryOrCreate"}),
        id="a custom prefix, trailing slash and all",
    ),
    pytest.param(
        {"persistentVolumeClaimSpec": LOCAL_CLAIM, "localVolumePathPrefix": ""},
        local_pv(),
        id="an empty prefix takes the default",
    ),
    pytest.param(
        {"persistentVolumeClaimSpec": LOCAL_CLAIM, "persistentVolumeLabels": {"tier": "a"}},
        local_pv(labels={"type": "local", "tier": "a"}),
        id="configured labels are added to type: local",
    ),
    pytest.param(
        {
            "persistentVolumeClaimSpec": LOCAL_CLAIM,
            "persistentVolumeSpec": {
                "storageClassName": "katib-suggestion",
                "capacity": {"storage": "2Gi"},
                "hostPath": {"path": "/data"},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": PV_NAME, "annotations": OWNER_ANNOTATIONS},
            "spec": {
                "storageClassName": "katib-suggestion",
                "capacity": {"storage": "2Gi"},
                "hostPath": {"path": f"/data/{PV_NAME}"},
                "persistentVolumeReclaimPolicy": "Delete",
                "claimRef": CLAIM_REF,
            },
        },
        id="a persistentVolumeSpec still wins, without type: local",
    ),
    pytest.param({}, None, id="no storage class: dynamic provisioning, no PV"),
    pytest.param(
        {"persistentVolumeClaimSpec": {"storageClassName": "standard"}},
        None,
        id="another storage class is untouched",
    ),
    pytest.param(
        {"persistentVolumeClaimSpec": {"storageClassName": "Katib-Suggestion"}},
        None,
        id="the class name is matched exactly",
    ),
    pytest.param(
        {"persistentVolumeClaimSpec": {"storageClassName": ""}, "localVolumePathPrefix": "/x"},
        None,
        id="a prefix alone selects nothing",
    ),
]


@pytest.mark.parametrize(("fields", "expected"), PLANS)
def test_the_volume_plan(fields: dict[str, Any], expected: dict[str, Any] | None) -> None:
    plan = volume_plan(suggestion(), entry(**fields))
    claim = plan.claim.manifest()
    if expected is None:
        assert plan.volume is None
        assert "volumeName" not in claim["spec"]
        return
    assert plan.volume is not None
    assert plan.volume.manifest() == expected
    assert claim["spec"]["volumeName"] == PV_NAME  # pre-bound from both sides
    assert "ownerReferences" not in plan.volume.manifest()["metadata"]


def test_the_claim_keeps_its_storage_class_and_is_owned() -> None:
    claim = volume_plan(suggestion(), entry(persistentVolumeClaimSpec=LOCAL_CLAIM)).claim
    assert claim.manifest()["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
        "storageClassName": "katib-suggestion",
        "volumeName": PV_NAME,
    }
    assert claim.manifest()["metadata"]["ownerReferences"][0]["uid"] == UID


def test_volume_source_is_fresh_on_every_call() -> None:
    config = entry(persistentVolumeClaimSpec=LOCAL_CLAIM)
    first = volume_source(config)
    assert first is not None and is_local(config)
    first.spec["hostPath"]["path"] = "/elsewhere"
    assert first.labels is not None
    first.labels["type"] = "remote"
    again = volume_source(config)
    assert again is not None
    assert again.spec["hostPath"]["path"] == "/tmp/katib/suggestions"
    assert again.labels == {"type": "local"}


# -- the config field --------------------------------------------------------------------------


def test_the_prefix_defaults_and_stays_out_of_the_container() -> None:
    config = entry()
    assert config.local_volume_path_prefix == "/tmp/katib/suggestions"
    assert "localVolumePathPrefix" not in config.container()
    assert entry(localVolumePathPrefix="/srv").local_volume_path_prefix == "/srv"


@pytest.mark.parametrize("prefix", ["srv/katib", "./katib", "/srv/../etc", "/srv/katib/.."])
def test_a_relative_or_climbing_prefix_is_one_clear_line(prefix: str) -> None:
    data = {"algorithmName": "random", "image": "i", "localVolumePathPrefix": prefix}
    with pytest.raises(ConfigError) as raised:
        parse_katib_config({**HEAD, "runtime": {"suggestions": [data]}})
    assert str(raised.value) == (
        "runtime.suggestions[0].localVolumePathPrefix: must be an absolute path without '..', "
        f"got '{prefix}'"
    )


# -- the embedded runtime's default config ------------------------------------------------------


def test_with_local_volumes_selects_the_mode_for_entries_without_a_volume_of_their_own() -> None:
    data = load("katib-config.yaml")
    suggestions = data["runtime"]["suggestions"]
    suggestions.append({"algorithmName": "own-class", "image": "i",
                        "persistentVolumeClaimSpec": {"storageClassName": "fast"}})  # fmt: skip
    suggestions.append({"algorithmName": "own-pv", "image": "i",
                        "persistentVolumeSpec": {"hostPath": {"path": "/data"}}})  # fmt: skip
    before = copy.deepcopy(data)
    config = parse_katib_config(with_local_volumes(data))
    assert data == before  # the input is not changed
    assert is_local(config.suggestion("random"))
    pbt = config.suggestion("pbt")  # Katib's shipped 5Gi ReadWriteMany claim is kept
    source = volume_source(pbt)
    assert source is not None and source.spec["capacity"] == {"storage": "5Gi"}
    assert source.spec["accessModes"] == ["ReadWriteMany"]
    assert config.suggestion("own-class").persistent_volume_claim_spec.storage_class_name == "fast"
    assert not is_local(config.suggestion("own-pv"))


def test_with_local_volumes_sets_the_prefix_on_exactly_the_local_entries() -> None:
    def claim(storage_class: str) -> dict[str, Any]:
        return {"persistentVolumeClaimSpec": {"storageClassName": storage_class}}

    suggestions = [
        {"algorithmName": "default"},
        {"algorithmName": "chosen-local"} | claim("katib-suggestion"),
        {"algorithmName": "own-class"} | claim("fast"),
        {"algorithmName": "own-pv", "persistentVolumeSpec": {"hostPath": {"path": "/data"}}},
    ]
    data = {"runtime": {"suggestions": suggestions}}
    entries = with_local_volumes(data, "/srv/k")["runtime"]["suggestions"]
    assert [e.get("localVolumePathPrefix") for e in entries] == ["/srv/k", "/srv/k", None, None]
    assert with_local_volumes(data) == with_local_volumes(data, None)
    assert "localVolumePathPrefix" not in str(with_local_volumes(data))


@pytest.mark.parametrize(
    "data",
    [{}, {"runtime": None}, {"runtime": {"suggestions": "x"}}, {"runtime": {"suggestions": [1]}}],
)
def test_with_local_volumes_leaves_malformed_content_for_the_parser(data: dict[str, Any]) -> None:
    assert with_local_volumes(data) == data


# -- admission: the stale-PV check applies to the local PV ---------------------------------------


def experiment(name: str = "exp", namespace: str = "team") -> Experiment:
    raw = load("from-volume-resume.yaml")
    raw["metadata"].update(name=name, namespace=namespace)
    return default_experiment(Experiment.model_validate(raw))


def test_a_left_over_local_pv_is_denied_with_katibs_message() -> None:
    catalog = parse_katib_config(with_local_volumes(load("katib-config.yaml")))
    plan = volume_plan(suggestion(), catalog.suggestion("random"))
    assert plan.volume is not None and plan.volume.name == PV_NAME
    decision = validate(experiment(), catalog=catalog, existing_pvs={PV_NAME})
    assert not decision.allowed
    assert decision.message == (
        f"Cannot create the Experiment: exp in namespace: team, PV: {PV_NAME} is not deleted"
    )
    assert validate(experiment(), catalog=catalog, existing_pvs={"other"}).allowed
