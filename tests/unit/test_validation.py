"""Admission (``core.validation``): Katib's validator cases, its exact texts, and our fixes."""

from __future__ import annotations

from typing import Any

import pytest

from katib_resume.core.config import ConfigError
from katib_resume.core.defaults import default_experiment
from katib_resume.core.field_errors import FieldError, go_quote
from katib_resume.core.model import Experiment
from katib_resume.core.validation import (
    Decision,
    aggregate,
    is_restartable,
    validate,
    volume_lookup_error,
)

SUCCEEDED_MAX_TRIALS = {
    "type": "Succeeded",
    "status": "True",
    "reason": "ExperimentMaxTrialsReached",
}
SUCCEEDED_GOAL = {"type": "Succeeded", "status": "True", "reason": "ExperimentGoalReached"}
FAILED = {"type": "Failed", "status": "True", "reason": "ExperimentFailed"}
ENABLED = {"katib.kubeflow.org/metrics-collector-injection": "enabled"}


class FakeCatalog:
    """katib-config knowing only the given algorithms, failing with Katib's texts otherwise."""

    def __init__(
        self, suggestions: tuple[str, ...] = ("test",), early: tuple[str, ...] = ("test",)
    ):
        self.suggestions, self.early = suggestions, early

    def suggestion(self, algorithm: str) -> object:
        if algorithm not in self.suggestions:
            raise ConfigError(
                f"failed to find suggestion config for algorithm: {algorithm} "
                "in ConfigMap: katib-config"
            )
        return algorithm

    def early_stopping(self, algorithm: str) -> object:
        if algorithm not in self.early:
            raise ConfigError(
                f"failed to find early stopping config for algorithm: {algorithm} "
                "in ConfigMap: katib-config"
            )
        return algorithm


FAKE_TEMPLATE: dict[str, Any] = {  # Katib's newFakeTrialTemplate(newFakeBatchJob())
    "primaryContainerName": "training-container",
    "successCondition": 'status.conditions.#(type=="Complete")#|#(status=="True")#',
    "failureCondition": 'status.conditions.#(type=="Failed")#|#(status=="True")#',
    "trialParameters": [
        {"name": "learningRate", "description": "Learning rate", "reference": "lr"},
        {"name": "momentum", "description": "Momentum", "reference": "momentum"},
    ],
    "trialSpec": {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "training-container",
                            "image": "docker.io/kubeflowkatib/mxnet-mnist",
                            "command": [
                                "python3",
                                "--lr=${trialParameters.learningRate}",
                                "--momentum=${trialParameters.momentum}",
                            ],
                        }
                    ]
                }
            }
        },
    },
}


def fake_instance(
    name: str = "fake",
    namespace: str = "fakens",
    conditions: tuple[dict[str, str], ...] = (),
    trials: int = 0,
    finalizers: tuple[str, ...] = (),
    **spec: Any,
) -> Experiment:
    """Katib's ``newFakeInstance`` (validator_test.go), with ``spec`` overrides."""
    base: dict[str, Any] = {
        "maxTrialCount": 6,
        "objective": {"type": "maximize", "goal": 0.11, "objectiveMetricName": "testme"},
        "algorithm": {"algorithmName": "test"},
        "earlyStopping": {"algorithmName": "test"},
        "parameters": [
            {
                "name": "lr",
                "parameterType": "int",
                "feasibleSpace": {"min": "1", "max": "5", "distribution": "uniform"},
            },
            {"name": "momentum", "parameterType": "categorical", "feasibleSpace": {"list": ["1"]}},
        ],
        "metricsCollectorSpec": {"collector": {"kind": "StdOut"}},
        "trialTemplate": FAKE_TEMPLATE,
    }
    meta = {"name": name, "namespace": namespace, "finalizers": list(finalizers)}
    status = {"conditions": list(conditions), "trials": trials}
    spec_data = {k: v for k, v in {**base, **spec}.items() if v is not None}
    return Experiment.model_validate({"metadata": meta, "spec": spec_data, "status": status})


def kinds(decision: Decision) -> list[tuple[str, str]]:
    return [(e.kind, e.field) for e in decision.errors]


# Katib's validator_test.go resume-related cases (docs/katib-contract.md#validator-tests), compared
# as Katib does.
KATIB_CASES = [
    ("Run validator to correct resume experiment", fake_instance(), fake_instance(), []),
    # Katib expects [Invalid spec.resumePolicy, Forbidden spec] here because its unit test skips
    # the mutating webhook: "" and "Never" differ only until defaulting. In a cluster (and here)
    # both are "Never", the spec is unchanged, and the update is allowed. The genuine restart
    # attempt is ``test_restart_of_never_experiment_is_denied`` below.
    (
        "Resume succeeded experiment with ResumePolicy = NeverResume",
        fake_instance(resumePolicy="Never", conditions=(SUCCEEDED_MAX_TRIALS,)),
        fake_instance(),
        [],
    ),
    (
        "Resume experiment with MaxTrialCount <= Status.Trials",
        fake_instance(maxFailedTrialCount=2, trials=6),
        fake_instance(),
        [("Invalid", "spec.maxTrialCount")],
    ),
    (
        "Change algorithm name when resuming experiment",
        fake_instance(algorithm={"algorithmName": "not-test"}),
        fake_instance(),
        [("Forbidden", "spec")],
    ),
    (
        "Invalid resume policy",
        None,
        fake_instance(resumePolicy="invalid-policy"),
        [("Invalid", "spec.resumePolicy")],
    ),
    (
        "Max failed trial count is negative",
        None,
        fake_instance(maxFailedTrialCount=-1),
        [("Invalid", "spec.maxFailedTrialCount")],
    ),
    (
        "Max trial count is negative",
        None,
        fake_instance(maxTrialCount=-1),
        [("Invalid", "spec.maxTrialCount")],
    ),
    (
        "Parallel trial count is negative",
        None,
        fake_instance(parallelTrialCount=-1),
        [("Invalid", "spec.parallelTrialCount")],
    ),
    (
        "maxFailedTrialCount greater than maxTrialCount",
        None,
        fake_instance(maxFailedTrialCount=6, maxTrialCount=5),
        [("Invalid", "spec.maxFailedTrialCount")],
    ),
    (
        "maxFailedTrialCount equal to maxTrialCount",
        None,
        fake_instance(maxFailedTrialCount=5, maxTrialCount=5),
        [],
    ),
    (
        "parallelTrialCount greater than maxTrialCount",
        None,
        fake_instance(parallelTrialCount=6, maxTrialCount=5),
        [("Invalid", "spec.parallelTrialCount")],
    ),
    (
        "parallelTrialCount equal to maxTrialCount",
        None,
        fake_instance(parallelTrialCount=5, maxTrialCount=5),
        [],
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [pytest.param(old, new, expected, id=desc) for desc, old, new, expected in KATIB_CASES],
)
def test_katib_validator_cases(
    old: Experiment | None, new: Experiment, expected: list[tuple[str, str]]
) -> None:
    decision = validate(new, old, catalog=FakeCatalog())
    assert kinds(decision) == expected
    assert decision.allowed == (not expected)


NAME_TEXT = (
    'metadata.name: Invalid value: "{}": name must consist of lower case alphanumeric '
    "characters or '-', start with an alphabetic character, and end with an alphanumeric "
    "character (e.g. 'my-name', or 'abc-123', regex used for validation is "
    "'^[a-z]([-a-z0-9]*[a-z0-9])?)') and may not be longer than 40 characters. "
)
RESTART_TEXT = (
    'spec.resumePolicy: Invalid value: "{}": Experiment can be restarted if it is in succeeded '
    "state by reaching max trials and spec.resumePolicy = LongRunning or spec.resumePolicy = "
    "FromVolume, when experiment is completed"
)
EDITABLE_TEXT = (
    "spec: Forbidden: only spec.parallelTrialCount, spec.maxTrialCount and "
    "spec.maxFailedTrialCount are editable"
)


@pytest.mark.parametrize(
    ("new", "text"),
    [
        pytest.param(fake_instance(name="9lives"), NAME_TEXT.format("9lives"), id="name-start"),
        pytest.param(fake_instance(name="a" * 41), NAME_TEXT.format("a" * 41), id="name-41"),
        pytest.param(
            fake_instance(maxFailedTrialCount=-2),
            "spec.maxFailedTrialCount: Invalid value: -2: should not be less than 0",
            id="max-failed-negative",
        ),
        pytest.param(
            fake_instance(maxTrialCount=0),
            "spec.maxTrialCount: Invalid value: 0: must be greater than 0",
            id="max-zero",
        ),
        pytest.param(
            fake_instance(parallelTrialCount=0),
            "spec.parallelTrialCount: Invalid value: 0: must be greater than 0",
            id="parallel-zero",
        ),
        pytest.param(
            fake_instance(maxFailedTrialCount=7),
            "spec.maxFailedTrialCount: Invalid value: 7: "
            "should be less than or equal to spec.maxTrialCount",
            id="max-failed-above-max",
        ),
        pytest.param(
            fake_instance(parallelTrialCount=8),
            "spec.parallelTrialCount: Invalid value: 8: "
            "should be less than or equal to spec.maxTrialCount",
            id="parallel-above-max",
        ),
        pytest.param(
            fake_instance(resumePolicy="Sometimes"),
            'spec.resumePolicy: Invalid value: "Sometimes": invalid ResumePolicyType',
            id="policy",
        ),
        pytest.param(
            fake_instance(algorithm={"algorithmName": "gone"}),
            'spec.algorithm.algorithmName: Invalid value: "gone": failed to find suggestion '
            "config for algorithm: gone in ConfigMap: katib-config",
            id="algorithm-unknown",
        ),
        pytest.param(
            fake_instance(earlyStopping={"algorithmName": "gone"}),
            'spec.earlyStopping.algorithmName: Invalid value: "gone": failed to find early '
            "stopping config for algorithm: gone in ConfigMap: katib-config",
            id="early-stopping-unknown",
        ),
    ],
)
def test_create_message_is_katibs_text(new: Experiment, text: str) -> None:
    decision = validate(new, catalog=FakeCatalog())
    assert decision.message == text  # alone: "9lives" breaks the Service name too, unsaid


def test_restart_messages_are_katibs_text() -> None:
    old = fake_instance(resumePolicy="LongRunning", conditions=(SUCCEEDED_GOAL,), trials=6)
    new = fake_instance(
        resumePolicy="LongRunning", maxTrialCount=5, algorithm={"algorithmName": "x"}
    )
    decision = validate(new, old)
    assert decision.message == (
        f"[{RESTART_TEXT.format('LongRunning')}, "
        "spec.maxTrialCount: Invalid value: 5: must be greater than status.trials count, "
        f"{EDITABLE_TEXT}]"
    )


def test_restart_of_never_experiment_is_denied() -> None:
    old = fake_instance(resumePolicy="Never", conditions=(SUCCEEDED_MAX_TRIALS,), trials=6)
    decision = validate(fake_instance(maxTrialCount=10), old)
    assert decision.errors == (FieldError("Invalid", "spec.resumePolicy", RESTART_TEXT.format("")),)
    changed = validate(fake_instance(maxTrialCount=10, resumePolicy="LongRunning"), old)
    assert kinds(changed) == [("Invalid", "spec.resumePolicy"), ("Forbidden", "spec")]


def test_field_errors_are_ordered_and_aggregated_like_katib() -> None:
    new = fake_instance(
        name="fake", maxTrialCount=-1, resumePolicy="bad", algorithm={"algorithmName": "gone"}
    )
    decision = validate(new, catalog=FakeCatalog())
    assert [e.field for e in decision.errors] == [
        "spec.maxTrialCount",
        "spec.algorithm.algorithmName",
        "spec.resumePolicy",
    ]
    assert decision.message == "[" + ", ".join(e.text for e in decision.errors) + "]"


def test_aggregate_collapses_duplicates() -> None:
    assert aggregate(["a", "a"]) == "a"
    assert aggregate(["a", "b", "a"]) == "[a, b]"


def test_go_quote_escapes_like_go() -> None:
    assert go_quote('a"b\\c\n\x01é') == '"a\\"b\\\\c\\n\\x01é"'


# --- namespace label (docs/katib-contract.md#admission) --------------------------------------


def test_namespace_without_injection_label_is_denied_first() -> None:
    decision = validate(fake_instance(maxTrialCount=-1), namespace_labels={"other": "x"})
    assert decision.message == (
        'Cannot create the Experiment "fake" in namespace "fakens": the namespace lacks label '
        '"katib.kubeflow.org/metrics-collector-injection: enabled"'
    )
    assert kinds(decision) == [("Forbidden", "metadata.namespace")]


def test_namespace_label_enabled_or_not_given_is_allowed() -> None:
    assert validate(fake_instance(), namespace_labels=ENABLED).allowed
    assert validate(fake_instance()).allowed


# --- PV check (docs/katib-contract.md#stale-pv-check) ----------------------------------------

PV = "fake-test-fakens"


def test_from_volume_create_with_existing_pv_is_denied() -> None:
    decision = validate(fake_instance(resumePolicy="FromVolume"), existing_pvs={PV})
    assert decision.message == (
        "Cannot create the Experiment: fake in namespace: fakens, "
        "PV: fake-test-fakens is not deleted"
    )
    assert not decision.allowed


@pytest.mark.parametrize(
    ("new", "pvs"),
    [
        pytest.param(fake_instance(resumePolicy="FromVolume"), {"other"}, id="pv-not-found"),
        pytest.param(fake_instance(resumePolicy="LongRunning"), {PV}, id="not-from-volume"),
    ],
)
def test_create_without_conflicting_pv_is_allowed(new: Experiment, pvs: set[str]) -> None:
    assert validate(new, existing_pvs=pvs) == Decision(allowed=True)


def test_pv_is_not_checked_on_update() -> None:
    old = fake_instance(resumePolicy="FromVolume", conditions=(SUCCEEDED_MAX_TRIALS,), trials=6)
    new = fake_instance(resumePolicy="FromVolume", maxTrialCount=9)
    assert validate(new, old, existing_pvs={PV}).allowed


def test_pv_is_not_checked_when_fields_are_invalid() -> None:
    decision = validate(
        fake_instance(resumePolicy="FromVolume", maxTrialCount=0), existing_pvs={PV}
    )
    assert kinds(decision) == [("Invalid", "spec.maxTrialCount")]


# --- better than Katib -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "algorithm", "namespace"),
    [
        pytest.param("a.b", "test", "fakens", id="dot-in-name-bug-25"),
        pytest.param("a" * 40, "a" * 23, "fakens", id="service-name-64-chars-bug-20"),
        pytest.param("fake", "Random", "fakens", id="upper-case-algorithm"),
        pytest.param("fake", "tpe_v2", "fakens", id="underscore-in-algorithm"),
        pytest.param("fake-", "test", "fakens", id="label-value-ends-with-dash"),
    ],
)
def test_names_katib_admits_but_kubernetes_refuses_are_denied(
    name: str, algorithm: str, namespace: str
) -> None:
    new = fake_instance(name=name, namespace=namespace, algorithm={"algorithmName": algorithm})
    decision = validate(new)
    assert not decision.allowed  # Katib admits it, then fails to create the Service forever
    assert NAME_TEXT.format(name) not in decision.message  # Katib's own rule is satisfied
    assert kinds(decision)[0] == ("Invalid", "metadata.name")
    assert decision.errors[0].text.startswith(f'metadata.name: Invalid value: "{name}": the ')


def test_long_valid_derived_names_are_allowed() -> None:
    new = fake_instance(name="a" * 40, algorithm={"algorithmName": "b" * 10})
    assert validate(new).allowed


def test_longest_valid_derived_names_are_allowed() -> None:
    new = fake_instance(name="a" * 40, algorithm={"algorithmName": "b" * 22})  # Service: 63
    assert validate(new).allowed


def legacy_completed(**spec: Any) -> Experiment:
    """A restartable Experiment stored by an older Katib: none of today's extra defaults."""
    return fake_instance(
        resumePolicy="LongRunning",
        parallelTrialCount=3,
        conditions=(SUCCEEDED_MAX_TRIALS,),
        trials=6,
        parameters=[
            {"name": "lr", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "5"}},
            {"name": "momentum", "parameterType": "categorical", "feasibleSpace": {"list": ["1"]}},
        ],
        **spec,
    )


def test_redefaulted_restart_of_legacy_experiment_is_allowed_bug_14() -> None:
    old = legacy_completed()
    new = default_experiment(legacy_completed(maxTrialCount=12))
    assert new.spec.model_extra and old.spec.model_extra
    assert new.spec.model_extra["parameters"] != old.spec.model_extra["parameters"]
    assert validate(new, old, catalog=FakeCatalog()) == Decision(allowed=True)


def test_unchanged_spec_update_skips_every_check_bug_14() -> None:
    old = legacy_completed(finalizers=("update-prometheus-metrics",))
    new = default_experiment(legacy_completed())  # finalizer removed, defaults re-applied
    unknown = FakeCatalog(suggestions=(), early=())
    decision = validate(new, old, catalog=unknown, namespace_labels={})
    assert decision == Decision(allowed=True)
    assert not validate(new, catalog=unknown, namespace_labels={}).allowed  # a CREATE is checked


def test_restart_with_max_trial_count_unset_needs_a_restartable_experiment() -> None:
    unset = fake_instance(resumePolicy="LongRunning", maxTrialCount=None)
    restartable = fake_instance(resumePolicy="LongRunning", conditions=(SUCCEEDED_MAX_TRIALS,))
    assert validate(unset, restartable).allowed
    by_goal = fake_instance(resumePolicy="LongRunning", conditions=(SUCCEEDED_GOAL,))
    assert kinds(validate(unset, by_goal)) == [("Invalid", "spec.resumePolicy")]
    running = fake_instance(resumePolicy="LongRunning", trials=2)
    assert validate(unset, running).allowed


@pytest.mark.parametrize(
    ("policy", "conditions", "expected"),
    [
        ("LongRunning", (SUCCEEDED_MAX_TRIALS,), True),
        ("FromVolume", (SUCCEEDED_MAX_TRIALS,), True),
        ("Never", (SUCCEEDED_MAX_TRIALS,), False),
        (None, (SUCCEEDED_MAX_TRIALS,), False),
        ("invalid-policy", (SUCCEEDED_MAX_TRIALS,), False),
        ("LongRunning", (SUCCEEDED_GOAL,), False),
        ("LongRunning", (FAILED,), False),
        ("FromVolume", (), False),
        ("FromVolume", ({**SUCCEEDED_MAX_TRIALS, "status": "False"},), False),
    ],
)
def test_is_restartable(
    policy: str | None, conditions: tuple[dict[str, str], ...], expected: bool
) -> None:
    assert is_restartable(fake_instance(resumePolicy=policy, conditions=conditions)) is expected


# --- boundaries and texts the mutation run (tools/mutate.py) found unpinned -------------------

LABEL_TEXT = (
    'metadata.name: Invalid value: "{0}": the label value "{0}" (katib.kubeflow.org/experiment) '
    "must be at most 63 characters, begin and end with an alphanumeric character and contain "
    "only alphanumerics, '-', '_' or '.'"
)


@pytest.mark.parametrize(
    "name", ["a" * 41, "a" * 64, "9lives", "Fake", "-fake", "a" * 41 + "."], ids=repr
)
def test_a_name_katib_rejects_gets_katibs_message_alone(name: str) -> None:
    """Katib's rule first: the label value and derived names it would also break go unsaid."""
    decision = validate(fake_instance(name=name))
    assert decision.message == NAME_TEXT.format(name)
    assert kinds(decision) == [("Invalid", "metadata.name")]


def test_a_name_katib_accepts_is_denied_with_the_label_value_rule_alone() -> None:
    assert validate(fake_instance(name="fake-")).message == LABEL_TEXT.format("fake-")
    assert validate(fake_instance(name="a" * 40)).allowed


def test_zero_failed_trials_allowed_and_counts_equal_to_the_limit_are_allowed() -> None:
    assert validate(fake_instance(maxFailedTrialCount=0)).allowed
    assert validate(fake_instance(maxFailedTrialCount=6, parallelTrialCount=6)).allowed
    assert validate(fake_instance(maxTrialCount=1, parallelTrialCount=1)).allowed


def test_a_stale_pv_is_a_forbidden_name() -> None:
    decision = validate(fake_instance(resumePolicy="FromVolume"), existing_pvs={PV})
    assert kinds(decision) == [("Forbidden", "metadata.name")]


def test_a_failed_pv_lookup_names_the_experiment_and_the_error() -> None:
    text = volume_lookup_error(fake_instance(), "connection refused")
    assert (
        text == "Cannot create the Experiment: fake in namespace: fakens, error: connection refused"
    )


def test_go_quote_escapes_unprintable_runes_by_their_size() -> None:
    # Go's strconv.Quote: \x below U+0080 (controls, DEL), \u up to U+FFFF, \U above.
    assert go_quote("\x00\x7f") == '"\\x00\\x7f"'
    assert go_quote("\x80\u200b") == '"\\u0080\\u200b"'
    assert go_quote("\U000e0001") == '"\\U000e0001"'


def test_counts_are_katibs_int32() -> None:
    assert validate(fake_instance(maxTrialCount=2_147_483_647)).allowed
    decision = validate(fake_instance(maxTrialCount=2_147_483_648))
    assert decision.message == (
        "spec.maxTrialCount: Invalid value: 2147483648: must be less than or equal to 2147483647"
    )
