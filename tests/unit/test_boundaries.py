"""The exact boundaries, texts and orders of the core's rules, one rule per test.

Each test pins what mutation testing (``tools/mutate.py``, ``docs/testing.md``) found free to
change without any test noticing: a limit one off, ``<`` for ``<=``, a message reworded, an
event's type, a create left out. The wider tests exercise these rules; these say exactly where
each one's edge is.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.actions import Create, Delete, RecordEvent, Requeue, UpdateStatus
from katib_resume.core.conditions import Condition, ConditionSpec, Status, set_condition
from katib_resume.core.config import parse_katib_config
from katib_resume.core.katib import SUG_DEPLOYMENT_NOT_READY, SUG_RUNNING
from katib_resume.core.model import Deployment, OwnedObject, PersistentVolumeClaim, Suggestion
from katib_resume.core.names import (
    CONFIG_MAP_NAME,
    derived_name_errors,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
)
from katib_resume.core.observed import Observed, Outcome, Validation
from katib_resume.core.plan import Plan, plan
from katib_resume.core.plan.children import ensure, teardown
from katib_resume.core.plan.marks import failed_mark, running_mark, waiting_mark
from katib_resume.core.plan.suggestion import merge_settings
from katib_resume.core.prebound import prebound_conflicts
from katib_resume.core.volumes import volume_plan
from tests.support.harness import shipped_config
from tests.unit.test_prebound import pv
from tests.unit.test_provision import child, experiment, observed, suggestion, trial

NOW = EPOCH + timedelta(hours=1)

# -- conditions --------------------------------------------------------------------------------


def test_a_message_only_change_refreshes_the_update_time_and_keeps_the_transition() -> None:
    old = Condition(
        type="Running",
        status=Status.TRUE,
        reason="R",
        message="before",
        last_update_time=EPOCH,
        last_transition_time=EPOCH,
    )
    (new,) = set_condition((old,), ConditionSpec("Running", Status.TRUE, "R", "after"), NOW)
    assert (new.message, new.last_update_time, new.last_transition_time) == ("after", NOW, EPOCH)


def test_a_parsed_condition_defaults_to_an_empty_reason_and_message_and_knows_unknown() -> None:
    parsed = Condition.model_validate({"type": "Created", "status": "Unknown"})
    assert parsed.status is Status.UNKNOWN
    assert ConditionSpec("Created", Status.UNKNOWN, "", "").matches(parsed)


def test_a_condition_spec_is_a_frozen_value() -> None:
    spec = ConditionSpec("Created", Status.TRUE, "r", "m")
    assert hash(spec) == hash(ConditionSpec("Created", Status.TRUE, "r", "m"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.message = "changed"  # type: ignore[misc]


# -- names -------------------------------------------------------------------------------------


def test_the_name_rules_end_at_63_and_253_characters() -> None:
    assert is_dns1123_label("a" * 63) and not is_dns1123_label("a" * 64)
    assert is_dns1035_label("a" * 63) and not is_dns1035_label("a" * 64)
    assert is_dns1123_subdomain("a" * 253) and not is_dns1123_subdomain("a" * 254)


def test_what_each_name_rule_admits() -> None:
    assert is_dns1123_label("1a-b") and not is_dns1123_label("a.b")
    assert not is_dns1123_label("-a") and not is_dns1123_label("a-") and not is_dns1123_label("A")
    assert is_dns1123_subdomain("a.b-c.1") and not is_dns1123_subdomain("a..b")
    assert not is_dns1123_subdomain("a_b") and not is_dns1035_label("1a")


def test_derived_names_too_long_are_denied_with_katib_resume_s_messages() -> None:
    assert derived_name_errors("e" * 57, "random", "ns") == [
        f'the Service and Deployment name "{"e" * 57}-random" (<experiment>-<algorithm>) must be '
        "a DNS-1035 label: at most 63 lower case alphanumeric characters or '-', starting with a "
        "letter and ending with an alphanumeric character"
    ]
    namespace = "n" * 245
    assert derived_name_errors("e", "random", namespace) == [
        f'the PersistentVolume name "e-random-{namespace}" (<experiment>-<algorithm>-<namespace>) '
        "must be a DNS-1123 subdomain of at most 253 characters"
    ]
    assert derived_name_errors("e", "random", "n" * 244) == []  # exactly 253
    assert CONFIG_MAP_NAME == "katib-config"


# -- the volume's waits ------------------------------------------------------------------------


def _unbound(age: float, phase: str | None = None) -> Observed:
    created = NOW - timedelta(seconds=age)
    raw = child("PersistentVolumeClaim", status={"phase": phase} if phase else {})
    raw["metadata"]["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    state = observed(experiment(), _deploying(suggestion(3, 3)), [])
    return replace(state, pvc=PersistentVolumeClaim.model_validate(raw), deployment=None)


def _volume() -> Any:
    return volume_plan(suggestion(3, 3), shipped_config().suggestion("random"))


def test_an_unbound_claim_is_told_from_its_thirtieth_second() -> None:
    assert waiting_mark(_unbound(29.999), _volume(), NOW) == SUG_DEPLOYMENT_NOT_READY
    told = waiting_mark(_unbound(30), _volume(), NOW)
    assert (told.reason, told.message) == (
        "VolumeNotBound",
        "Deployment is not ready: PersistentVolumeClaim kubeflow/from-volume-resume-random is "
        "not bound (phase Pending)",
    )
    assert waiting_mark(_unbound(31, "Lost"), _volume(), NOW).message.endswith("(phase Lost)")


def _requeues(result: object) -> list[Requeue]:
    assert isinstance(result, Plan)
    return [a for a in result.actions if isinstance(a, Requeue)]


def test_the_reconcile_comes_back_when_the_grace_ends() -> None:
    waits = _requeues(plan(_unbound(10), shipped_config(), NOW))
    bind = [w for w in waits if w.reason == "waiting for the PersistentVolumeClaim to bind"]
    assert [w.after_seconds for w in bind] == [pytest.approx(20.0)]
    late = _requeues(plan(_unbound(30), shipped_config(), NOW))
    assert not [w for w in late if "to bind" in w.reason]


# -- what the service said ---------------------------------------------------------------------


def test_the_running_message_repeats_only_a_valid_verdict_s_note() -> None:
    base = observed(experiment(), suggestion(3, 3), [])
    note = replace(base, validation=Validation(Outcome.VALID, "state rebuilt"))
    assert running_mark(note).message == "Suggestion is running: state rebuilt"
    assert running_mark(replace(base, validation=Validation(Outcome.VALID))) == SUG_RUNNING
    refused = replace(base, validation=Validation(Outcome.INVALID, "bad"))
    assert running_mark(refused) == SUG_RUNNING
    assert failed_mark(refused).message == "Validation failed: bad"
    silent = replace(base, validation=Validation(Outcome.UNAVAILABLE, "down"))
    assert failed_mark(silent).message == "Validation failed: "


# -- the Suggestion's reconcile ----------------------------------------------------------------


def _deploying(sug: Suggestion) -> Suggestion:
    raw = sug.to_dict()
    raw["status"]["conditions"] = [
        {"type": "Created", "status": "True", "reason": "SuggestionCreated"},
        {"type": "DeploymentReady", "status": "False", "reason": "DeploymentNotReady"},
    ]
    return Suggestion.model_validate(raw)


def _events(result: object) -> list[RecordEvent]:
    assert isinstance(result, Plan)
    return [a for a in result.actions if isinstance(a, RecordEvent)]


def test_a_failed_suggestion_is_a_warning_and_a_running_one_is_normal() -> None:
    state = replace(observed(experiment(), _deploying(suggestion(3, 3)), []))
    failed = replace(state, validation=Validation(Outcome.INVALID, "bad settings"))
    (event,) = _events(plan(failed, shipped_config(), NOW))
    assert (event.type, event.reason, event.message) == (
        "Warning",
        "DeploymentBecameAvailable",
        "Suggestion Deploying -> Failed",
    )
    running = replace(state, validation=Validation(Outcome.VALID))
    (event,) = _events(plan(running, shipped_config(), NOW))
    assert (event.type, event.message) == ("Normal", "Suggestion Deploying -> Running")


def test_a_silent_service_is_asked_again_and_reported() -> None:
    state = observed(experiment(), _deploying(suggestion(3, 3)), [])
    silent = replace(state, validation=Validation(Outcome.UNAVAILABLE, "no answer"))
    result = plan(silent, shipped_config(), NOW)
    assert [(e.type, e.reason, e.message) for e in _events(result)] == [
        ("Warning", "ValidationUnavailable", "no answer")
    ]
    assert [(w.after_seconds, w.reason) for w in _requeues(result)] == [
        (5.0, "suggestion service did not answer validation")
    ]


def test_terminating_children_are_waited_for_by_name() -> None:
    state = observed(experiment(), _deploying(suggestion(3, 3)), [])
    going = []
    for kind in ("Deployment", "Service"):
        raw = child(kind)
        raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        going.append(raw)
    dep = Deployment.model_validate(going[0])
    svc = OwnedObject.model_validate(going[1])
    waits = _requeues(plan(replace(state, deployment=dep, service=svc), shipped_config(), NOW))
    assert [(w.after_seconds, w.reason) for w in waits] == [
        (
            5.0,
            "waiting for Service from-volume-resume-random to finish terminating, "
            "Deployment from-volume-resume-random to finish terminating",
        )
    ]


def test_a_config_without_the_algorithm_is_a_warning_and_a_retry() -> None:
    state = observed(experiment(), _deploying(suggestion(3, 3)), [])
    config = parse_katib_config(
        {
            "apiVersion": "config.kubeflow.org/v1beta1",
            "kind": "KatibConfig",
            "runtime": {"suggestions": [{"algorithmName": "grid", "image": "img"}]},
        }
    )
    result = plan(replace(state, deployment=None), config, NOW)
    (event,) = _events(result)
    assert (event.type, event.reason) == ("Warning", "ReconcileError")
    assert "random" in event.message
    assert [(w.after_seconds, w.reason) for w in _requeues(result)] == [(5.0, event.message)]
    assert isinstance(result, Plan)
    touched = [
        a for a in result.actions if isinstance(a, UpdateStatus) and a.ref.kind != "Experiment"
    ]
    made = [a for a in result.actions if isinstance(a, Create) and a.manifest["kind"] != "Trial"]
    assert touched == [] and made == []


def test_returned_settings_replace_in_place_append_new_and_skip_nameless() -> None:
    held = [{"name": "a", "value": "1"}, {"name": "b", "value": "2"}]
    returned: list[dict[str, Any]] = [
        {"name": "b", "value": 3},
        {"name": "c"},
        {"value": "x"},
        {"name": "", "value": "y"},
    ]
    assert merge_settings(held, returned) == [
        {"name": "a", "value": "1"},
        {"name": "b", "value": "3"},
        {"name": "c", "value": ""},
    ]


def test_two_conflicts_are_joined_in_one_message() -> None:
    found = prebound_conflicts(_volume(), [pv("one"), pv("two")], None, None)
    assert len(found) == 2 and all("(no uid yet)" in text for text in found)
    state = observed(experiment(), _deploying(suggestion(3, 3)), [])
    blocked = replace(state, deployment=None, claimants=(pv("one"), pv("two")))
    result = plan(blocked, shipped_config(), NOW)
    assert isinstance(result, Plan)
    (write,) = [
        a for a in result.actions if isinstance(a, UpdateStatus) and a.ref.kind == "Suggestion"
    ]
    ready = next(c for c in write.status["conditions"] if c["type"] == "DeploymentReady")
    mine = prebound_conflicts(_volume(), [pv("one"), pv("two")], None, "s-uid")
    assert ready["message"] == "; ".join(mine)


# -- what is created ---------------------------------------------------------------------------


def _early_stopping() -> Suggestion:
    raw = suggestion(3, 3).to_dict()
    raw["spec"]["earlyStopping"] = {"algorithmName": "medianstop"}
    return Suggestion.model_validate(raw)


def test_the_children_are_created_in_katib_s_order_with_early_stopping_s_rbac() -> None:
    sug = _early_stopping()
    empty = Observed("kubeflow", "from-volume-resume", experiment(), sug)
    made = ensure(empty, sug, shipped_config(), _volume())
    kinds = [c.manifest["kind"] for c in made.creates]
    assert kinds == [
        "PersistentVolumeClaim",
        "Service",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "Deployment",
    ]
    plain = ensure(empty, suggestion(3, 3), shipped_config(), None)
    assert [c.manifest["kind"] for c in plain.creates] == ["Service", "Deployment"]


def test_only_the_missing_rbac_object_is_created() -> None:
    sug = _early_stopping()
    base = observed(experiment(), sug, [])
    state = replace(
        base,
        service_account=OwnedObject.model_validate(child("ServiceAccount")),
        role=OwnedObject.model_validate(child("Role")),
    )
    made = ensure(state, sug, shipped_config(), _volume())
    assert [c.manifest["kind"] for c in made.creates] == ["RoleBinding"]


def test_the_reconcile_comes_back_for_the_last_half_second_of_the_grace() -> None:
    waits = _requeues(plan(_unbound(29.5), shipped_config(), NOW))
    bind = [w.after_seconds for w in waits if "to bind" in w.reason]
    assert bind == [pytest.approx(0.5)]


def _pending(sug: Suggestion) -> Suggestion:
    raw = sug.to_dict()
    raw["status"] = {}
    return Suggestion.model_validate(raw)


def _suggestion_write(result: object) -> dict[str, Any]:
    assert isinstance(result, Plan)
    (write,) = [
        a for a in result.actions if isinstance(a, UpdateStatus) and a.ref.kind == "Suggestion"
    ]
    return write.status


def test_a_new_suggestion_is_created_and_stamped_even_before_its_config_is_known() -> None:
    state = Observed("kubeflow", "from-volume-resume", experiment(), _pending(suggestion(3, 0)))
    config = parse_katib_config(
        {
            "apiVersion": "config.kubeflow.org/v1beta1",
            "kind": "KatibConfig",
            "runtime": {"suggestions": [{"algorithmName": "grid", "image": "img"}]},
        }
    )
    status = _suggestion_write(plan(state, config, NOW))
    assert status["startTime"] == "2026-01-01T01:00:00Z"
    assert [c["type"] for c in status["conditions"]] == ["Created"]


def test_returned_settings_are_recorded_with_the_assignments() -> None:
    state = observed(experiment(), suggestion(3, 2), [])
    fresh = ({"name": "from-volume-resume-00000002", "parameterAssignments": []},)
    answered = replace(state, assignments=fresh, algorithm_settings=({"name": "x", "value": "1"},))
    status = _suggestion_write(plan(answered, shipped_config(), NOW))
    assert status["suggestionCount"] == 3
    assert status["algorithmSettings"] == [{"name": "x", "value": "1"}]


def _created(sug: Suggestion) -> Suggestion:
    raw = sug.to_dict()
    raw["status"]["conditions"] = [
        {"type": "Created", "status": "True", "reason": "SuggestionCreated"}
    ]
    return Suggestion.model_validate(raw)


def test_a_first_deployment_without_a_claim_yet_is_a_normal_event() -> None:
    state = Observed("kubeflow", "from-volume-resume", experiment(), _created(suggestion(3, 0)))
    (event,) = _events(plan(state, shipped_config(), NOW))
    assert (event.type, event.message) == ("Normal", "Suggestion Created -> Deploying")


def test_a_restart_on_its_kept_claim_is_a_normal_event() -> None:
    raw = suggestion(3, 3).to_dict()
    raw["status"]["conditions"] = [
        {"type": "Created", "status": "True", "reason": "SuggestionCreated"},
        {"type": "Succeeded", "status": "True", "reason": "Experiment is succeeded"},
    ]
    state = observed(experiment(maxTrialCount=5), Suggestion.model_validate(raw), [])
    state = replace(state, deployment=None, service=None)
    events = [e for e in _events(plan(state, shipped_config(), NOW)) if "Suggestion" in e.message]
    assert [(e.type, e.message) for e in events] == [
        ("Normal", "Suggestion Succeeded -> Restarting")
    ]


def test_a_foreign_deployment_or_service_is_named_in_the_conflict() -> None:
    state = observed(experiment(), _deploying(suggestion(3, 3)), [])
    dep, svc = child("Deployment"), child("Service")
    for raw in (dep, svc):
        raw["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    foreign = replace(
        state,
        deployment=Deployment.model_validate(dep),
        service=OwnedObject.model_validate(svc),
    )
    ready = next(
        c
        for c in _suggestion_write(plan(foreign, shipped_config(), NOW))["conditions"]
        if c["type"] == "DeploymentReady"
    )
    assert ready["message"] == (
        "Deployment kubeflow/from-volume-resume-random is not owned by this Suggestion; "
        "Service kubeflow/from-volume-resume-random is not owned by this Suggestion"
    )


def test_a_terminating_pv_is_waited_for_by_name() -> None:
    config = shipped_config(persistentVolumeClaimSpec={"storageClassName": "katib-suggestion"})
    sug = suggestion(3, 3)
    volume = volume_plan(sug, config.suggestion("random"))
    assert volume.volume is not None
    going = pv(volume.volume.name)
    going = going.model_copy(
        update={"metadata": going.metadata.model_copy(update={"deletion_timestamp": EPOCH})}
    )
    state = replace(Observed("kubeflow", "from-volume-resume", experiment(), sug), pv=going)
    made = ensure(state, sug, config, volume)
    assert made.waiting_for == (f"PersistentVolume {volume.volume.name} to finish terminating",)


def test_teardown_deletes_each_child_with_its_uid() -> None:
    raw = suggestion(3, 3).to_dict()
    raw["status"]["conditions"] = [
        {"type": "Created", "status": "True", "reason": "SuggestionCreated"},
        {"type": "Succeeded", "status": "True", "reason": "Experiment is succeeded"},
    ]
    state = observed(experiment(), Suggestion.model_validate(raw), [])
    dep, svc = child("Deployment"), child("Service")
    dep["metadata"]["uid"], svc["metadata"]["uid"] = "d-uid", "svc-uid"
    state = replace(
        state,
        deployment=Deployment.model_validate(dep),
        service=OwnedObject.model_validate(svc),
    )
    assert state.suggestion is not None
    deletes = teardown(state, state.suggestion)
    assert [(d.ref.kind, d.uid) for d in deletes if isinstance(d, Delete)] == [
        ("Deployment", "d-uid"),
        ("Service", "svc-uid"),
    ]


def test_a_completion_is_marked_even_when_katib_config_lost_the_algorithm() -> None:
    raw = experiment(maxTrialCount=3).to_dict()
    raw["status"] = {
        "conditions": [
            {"type": "Created", "status": "True", "reason": "ExperimentCreated"},
            {"type": "Succeeded", "status": "True", "reason": "ExperimentMaxTrialsReached"},
        ]
    }
    done = type(experiment()).model_validate(raw)
    trials = tuple(trial(i) for i in range(3))
    state = Observed("kubeflow", "from-volume-resume", done, _created(suggestion(3, 3)), trials)
    config = parse_katib_config(
        {
            "apiVersion": "config.kubeflow.org/v1beta1",
            "kind": "KatibConfig",
            "runtime": {"suggestions": [{"algorithmName": "grid", "image": "img"}]},
        }
    )
    status = _suggestion_write(plan(state, config, NOW))
    assert "Succeeded" in [c["type"] for c in status["conditions"]]


def test_returned_settings_are_merged_into_the_held_ones() -> None:
    raw = suggestion(3, 2).to_dict()
    raw["status"]["algorithmSettings"] = [{"name": "x", "value": "0"}, {"name": "y", "value": "9"}]
    state = observed(experiment(), Suggestion.model_validate(raw), [])
    fresh = ({"name": "from-volume-resume-00000002", "parameterAssignments": []},)
    answered = replace(state, assignments=fresh, algorithm_settings=({"name": "x", "value": "1"},))
    status = _suggestion_write(plan(answered, shipped_config(), NOW))
    assert status["algorithmSettings"] == [{"name": "x", "value": "1"}, {"name": "y", "value": "9"}]
