"""Katib's bugs (docs/katib-contract.md#katib-bugs) that katib-resume fixes, each shown on a whole
lifecycle.

Every test states the bug number it guards and fails on Katib's behaviour.
"""

from __future__ import annotations

from typing import Any

from katib_resume.core.actions import Delete
from katib_resume.core.katib import ANNOTATION_OWNER_UID, API_VERSION
from katib_resume.core.observed import Outcome, Validation
from tests.integration.test_resume_sequences import experiment, first_run
from tests.support.harness import (
    Bench,
    notation,
    owned_volume_is_cleaned_up,
    shipped_config,
)

HOST_PV = {
    "storageClassName": "manual",
    "accessModes": ["ReadWriteOnce"],
    "capacity": {"storage": "1Gi"},
    "hostPath": {"path": "/var/katib/suggestions/"},
}


def running_bench(policy: str, config: Any = None, **spec: Any) -> Bench:
    bench = Bench(experiment(policy, **spec), config)
    bench.settle()
    bench.set_available()
    bench.settle()
    return bench


def condition(bench: Bench, kind: str, type_: str) -> dict[str, Any]:
    obj = bench.get(kind)
    assert obj is not None
    return next(c for c in obj["status"]["conditions"] if c["type"] == type_)


def test_bug_1_no_restart_loop_without_max_trial_count() -> None:
    for policy in ("Never", "LongRunning", "FromVolume"):
        bench = running_bench(policy, maxTrialCount=None)
        bench.add_trials(3, "Failed")
        bench.settle()
        assert bench.conditions("Experiment")[-1] == "F"
        for _ in range(5):
            assert bench.reconcile().writes == (), policy
        assert "Rs" not in bench.conditions("Experiment")


def test_bug_1_goal_reached_without_max_is_final() -> None:
    bench = running_bench("FromVolume", maxTrialCount=None)
    bench.add_trials(1, loss=0.0001)
    bench.settle()
    assert bench.conditions("Experiment") == ["Cr", "SG"]  # the first trial reached the goal
    assert bench.settle() and bench.reconcile().writes == ()


def _generations(bench: Bench) -> tuple[int, int]:
    exp = bench.experiment()
    return exp["metadata"]["generation"], exp["status"]["observedGeneration"]


def test_bug_2_each_restart_renews_restarting_which_outlives_the_restarted_run() -> None:
    bench = Bench(experiment("FromVolume"))
    first_run(bench)
    bench.edit(maxTrialCount=15)
    generation, observed = _generations(bench)
    assert observed < generation  # the edit is not seen yet: a client can tell the old Succeeded
    bench.settle()
    assert _generations(bench) == (generation, generation)
    first = condition(bench, "Experiment", "Restarting")
    bench.set_available()
    bench.settle()
    bench.add_trials(3)
    bench.settle()
    # kept True after the restarted run, as Katib does: a client polling for it still finds it
    assert condition(bench, "Experiment", "Restarting") == first
    assert bench.conditions("Experiment") == ["Cr", "Rs", "Ru-", "SM"]
    bench.edit(maxTrialCount=18)
    bench.settle()
    second = condition(bench, "Experiment", "Restarting")
    assert second["status"] == "True" and second["message"] == first["message"]
    # Katib keeps the first restart's times; here they are the second restart's
    assert second["lastTransitionTime"] > first["lastTransitionTime"]
    assert second["lastUpdateTime"] > first["lastUpdateTime"]
    assert bench.conditions("Experiment") == ["Cr", "Rs", "Ru+"]
    assert _generations(bench)[1] == generation + 1


def test_bugs_4_and_6_pv_is_prebound_private_owned_and_cleaned_up() -> None:
    bench = running_bench("FromVolume", shipped_config(persistentVolumeSpec=HOST_PV))
    pv_name = "from-volume-resume-random-kubeflow"
    pv = owned_volume_is_cleaned_up(bench)
    assert pv["spec"]["claimRef"]["name"] == "from-volume-resume-random"
    assert pv["spec"]["claimRef"]["namespace"] == "kubeflow"
    assert pv["spec"]["hostPath"]["path"] == f"/var/katib/suggestions/{pv_name}"


def test_bug_6_a_foreign_pv_is_never_adopted() -> None:
    bench = Bench(experiment("FromVolume"), shipped_config(persistentVolumeSpec=HOST_PV))
    foreign = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": "from-volume-resume-random-kubeflow",
            "annotations": {ANNOTATION_OWNER_UID: "someone-else"},
        },
        "spec": dict(HOST_PV),
    }
    stranger = bench.cluster.create(foreign)
    bench.settle()
    ready = condition(bench, "Suggestion", "DeploymentReady")
    assert (ready["status"], ready["reason"]) == ("False", "OwnershipConflict")
    assert "from-volume-resume-random-kubeflow" in ready["message"]
    assert bench.deployment() is None and bench.pvc() is None
    bench.cluster.delete(
        bench.ref("PersistentVolume", "-random-kubeflow", "v1"), stranger["metadata"]["uid"]
    )
    bench.settle()
    assert bench.conditions("Suggestion") == ["C", "DR-"]
    pv = bench.pv()
    assert pv is not None and pv["metadata"]["uid"] != stranger["metadata"]["uid"]


def test_bug_7_trials_of_another_namespace_never_count() -> None:
    bench = running_bench("FromVolume")
    bench.add_trials(12, namespace="elsewhere")
    bench.settle()
    assert bench.conditions("Experiment") == ["Cr"]


def test_bug_8_teardown_needs_no_katib_config() -> None:
    bench = running_bench("FromVolume")
    data_without_random = shipped_config()
    bench.config = data_without_random.model_copy(
        update={"runtime": data_without_random.runtime.model_copy(update={"suggestions": ()})}
    )
    bench.add_trials(12)
    bench.settle()
    assert bench.deployment() is None and bench.service() is None
    assert bench.conditions("Suggestion")[-1] == "S_V"


def test_bug_9_a_failed_suggestion_releases_its_service_and_fails_the_experiment() -> None:
    bench = Bench(experiment("FromVolume"))
    bench.validation = Validation(Outcome.INVALID, "ValidateAlgorithmSettings Error: bad")
    bench.settle()
    bench.set_available()
    bench.settle()
    assert bench.conditions("Suggestion") == ["C", "DR+", "SF"]
    failed = condition(bench, "Suggestion", "Failed")
    assert failed["message"] == "Validation failed: ValidateAlgorithmSettings Error: bad"
    assert bench.deployment() is None and bench.service() is None
    exp = bench.experiment()
    assert notation(exp["status"]["conditions"])[-1] == "F"
    assert condition(bench, "Experiment", "Failed")["message"] == "Suggestion has failed"
    assert exp["status"]["completionTime"]


def test_bug_10_a_failed_experiment_is_not_called_succeeded_or_restartable() -> None:
    bench = running_bench("FromVolume")
    bench.add_trials(3, "Failed")
    bench.settle()
    succeeded = condition(bench, "Suggestion", "Succeeded")
    assert succeeded["reason"] == "Experiment is failed"
    assert "can't be restarted" in succeeded["message"]


def test_bug_11_long_running_releases_a_service_nobody_can_restart() -> None:
    bench = running_bench("LongRunning")
    bench.add_trials(1, loss=0.0001)
    bench.settle()
    assert bench.conditions("Experiment")[-1] == "SG"
    assert bench.deployment() is None and bench.service() is None
    assert bench.conditions("Suggestion")[-1] == "S_N"


def test_bug_16_an_unbound_pvc_is_reported() -> None:
    bench = Bench(experiment("FromVolume"))
    bench.settle()
    bench.clock.advance(60)
    bench.settle()
    ready = condition(bench, "Suggestion", "DeploymentReady")
    assert (ready["status"], ready["reason"]) == ("False", "VolumeNotBound")
    assert (
        "PersistentVolumeClaim kubeflow/from-volume-resume-random is not bound" in ready["message"]
    )
    bench.bind_pvc()
    bench.settle()
    assert condition(bench, "Suggestion", "DeploymentReady")["reason"] == "DeploymentNotReady"


def test_bug_21_a_terminating_deployment_is_not_the_live_one() -> None:
    bench = Bench(experiment("FromVolume"))
    first_run(bench)
    bench.edit(maxTrialCount=20)
    bench.settle()
    deployment = bench.deployment()
    assert deployment is not None
    ref = bench.ref("Deployment", "-random", "apps/v1")
    bench.set_available()
    bench.cluster.set_finalizers(ref, ["test/hold"], None)
    bench.cluster.delete(ref, deployment["metadata"]["uid"])  # terminating, still Available
    bench.settle()
    assert "DR+" not in bench.conditions("Suggestion")
    assert any("terminating" in getattr(a, "reason", "") for a in bench.plans[-1].actions)
    bench.cluster.set_finalizers(ref, [], None)
    bench.settle()
    replacement = bench.deployment()
    assert replacement is not None
    assert replacement["metadata"]["uid"] != deployment["metadata"]["uid"]


def _trial_names(bench: Bench) -> list[str]:
    return sorted(t["metadata"]["name"] for t in bench.cluster.list(API_VERSION, "Trial", None, {}))


def test_bug_22_surplus_trials_are_deleted_in_one_plan_and_their_assignments_kept() -> None:
    bench = running_bench("FromVolume", parallelTrialCount=3, maxTrialCount=6)
    bench.serves_assignments = True
    bench.settle()
    first = _trial_names(bench)
    assert len(first) == 3
    bench.edit(parallelTrialCount=1)
    plan = bench.reconcile()  # Katib would wait here for up to 60 s for the Trials to go
    deleted = [a.ref.name for a in plan.actions if isinstance(a, Delete) and a.ref.kind == "Trial"]
    assert deleted == first[:0:-1]  # the newest two, newest first, in the same plan
    bench.settle()
    assert _trial_names(bench) == first[:1]
    bench.edit(parallelTrialCount=3)
    bench.settle()
    suggestion = bench.suggestion()
    assert suggestion is not None and suggestion["spec"]["requests"] == 3  # nothing asked again
    assert _trial_names(bench) == first  # the kept assignments became Trials again


def test_validation_unavailable_is_retried_not_fatal() -> None:
    bench = Bench(experiment("FromVolume"))
    bench.validation = Validation(Outcome.UNAVAILABLE, "connection refused")
    bench.settle()
    bench.set_available()
    bench.settle()
    assert bench.conditions("Suggestion") == ["C", "DR-"]
    assert any(e.reason == "ValidationUnavailable" for e in bench.cluster.events)
    bench.validation = None
    bench.settle()
    assert bench.conditions("Suggestion") == ["C", "DR+", "R+"]


def test_a_conflict_found_on_restart_is_reported_not_waited_on_silently() -> None:
    """A restart that meets a stranger's volume under our name says so, as a first run does
    (it used to wait in Restarting with no word: the conflict was only reported while Created,
    Deploying or Running)."""
    bench = Bench(experiment("FromVolume"))
    first_run(bench)
    bench.config = shipped_config(persistentVolumeSpec=HOST_PV)  # now the entry brings a PV
    foreign = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "from-volume-resume-random-kubeflow"},
        "spec": dict(HOST_PV),
    }
    stranger = bench.cluster.create(foreign)
    bench.edit(maxTrialCount=15)
    bench.settle()
    ready = condition(bench, "Suggestion", "DeploymentReady")
    assert (ready["status"], ready["reason"]) == ("False", "OwnershipConflict")
    assert condition(bench, "Experiment", "Restarting")["status"] == "True"
    assert bench.deployment() is None
    bench.cluster.delete(
        bench.ref("PersistentVolume", "-random-kubeflow", "v1"), stranger["metadata"]["uid"]
    )
    bench.settle()
    assert bench.deployment() is not None
    pv = bench.pv()
    assert pv is not None and pv["metadata"]["uid"] != stranger["metadata"]["uid"]
