"""A Trial's run object (``core/trial_run.py``, docs/katib-contract.md#trial-controller): the
trialResources spelling, each refusal's exact words, and the object made from ``spec.runSpec``
(renamed, moved, its controller reference replaced by the Trial's)."""

from __future__ import annotations

from typing import Any

import pytest

from katib_resume.core.model.trial import Trial
from katib_resume.core.trial_run import (
    controller_uid,
    desired_run,
    parse_resource,
    refusal,
    watched_kinds,
)
from tests.support.trials import batch_job, new_trial

JOBS = watched_kinds()
TRIAL_OWNER = {
    "apiVersion": "kubeflow.org/v1beta1",
    "kind": "Trial",
    "name": "t",
    "uid": "uid-default-t",
    "controller": True,
    "blockOwnerDeletion": True,
}


def _trial(run: dict[str, Any] | None = None, **meta: Any) -> Trial:
    raw = new_trial("t", run=run)
    if run is None:
        raw["spec"].pop("runSpec")
    raw["metadata"].update(meta)
    return Trial.model_validate(raw)


def _owned_job(*refs: dict[str, Any]) -> dict[str, Any]:
    job = batch_job("t")
    job["metadata"]["ownerReferences"] = list(refs)
    return job


@pytest.mark.parametrize("entry", ["TFJob.v1", "TFJob..kubeflow.org", ".v1.batch"])
def test_a_trial_resource_needs_kind_version_and_group(entry: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_resource(entry)
    assert str(error.value) == f"trialResources entry {entry!r} is not Kind.version.group"
    assert parse_resource("TFJob.v1.kubeflow.org") == ("kubeflow.org/v1", "TFJob")


def test_each_refusal_says_why_in_full() -> None:
    assert refusal(_trial(), JOBS) == (
        "Trial has failed: spec.runSpec has no apiVersion and kind, so nothing can run it"
    )
    tf = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {}}
    watched = watched_kinds(["Job.v1.batch", "PyTorchJob.v1.kubeflow.org"])
    assert refusal(_trial(tf), watched) == (
        "Trial has failed: its run object kind TFJob.v1.kubeflow.org is not among "
        "katib-config's trialResources (Job.v1.batch, PyTorchJob.v1.kubeflow.org), "
        "so its progress could never be observed"
    )
    other = {"kind": "Trial", "name": "other", "uid": "u2", "controller": True}
    assert refusal(_trial(_owned_job(other)), JOBS) == (
        "Trial has failed: spec.runSpec is already controlled by Trial other"
    )


def test_only_another_controller_refuses_a_run_spec() -> None:
    mine = {"kind": "Trial", "name": "t", "uid": "uid-default-t", "controller": True}
    plain = {"kind": "ConfigMap", "name": "cm", "uid": "u3"}
    assert refusal(_trial(_owned_job(plain, mine)), JOBS) is None
    assert refusal(_trial(batch_job("t")), JOBS) is None


def test_the_run_object_is_named_placed_and_owned_as_the_trials() -> None:
    job = _owned_job(
        {"kind": "Trial", "name": "t", "uid": "uid-default-t", "controller": True},
        {"kind": "ConfigMap", "name": "cm", "uid": "u3"},
    )
    job["metadata"].update(name="other", namespace="elsewhere")
    run = desired_run(_trial(job))
    meta = run["metadata"]
    assert (meta["name"], meta["namespace"]) == ("t", "default")
    assert meta["ownerReferences"] == [
        {"kind": "ConfigMap", "name": "cm", "uid": "u3"},
        TRIAL_OWNER,
    ]
    assert controller_uid(run) == "uid-default-t"


def test_a_trial_without_a_uid_owns_its_run_by_an_empty_uid() -> None:
    raw = new_trial("t")
    del raw["metadata"]["uid"]
    run = desired_run(Trial.model_validate(raw))
    assert run["metadata"]["ownerReferences"] == [{**TRIAL_OWNER, "uid": ""}]
    assert controller_uid(run) == ""
    assert controller_uid({"kind": "Job"}) is None
    assert controller_uid(_owned_job({"kind": "ConfigMap", "uid": "u3"})) is None
