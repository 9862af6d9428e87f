"""Properties of admission: admitted names are valid, a name Katib rejects gets Katib's message
alone, ``validate`` is total, restarts are guarded.

The Kubernetes name rules, and Katib's, are written out here again, independently of
``core.names`` and ``core.validation``, so that these tests are an oracle for them rather than a
restatement.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from katib_resume.core.config import ConfigError
from katib_resume.core.defaults import default_experiment
from katib_resume.core.field_errors import go_quote
from katib_resume.core.model import Experiment
from katib_resume.core.names import pv_name, service_name
from katib_resume.core.validation import Decision, validate

DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
KATIB_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")  # re.match: anchored at the start only
KATIB_NAME_DETAIL = (  # Katib's message, its trailing space included
    "name must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123', regex used "
    "for validation is '^[a-z]([-a-z0-9]*[a-z0-9])?)') and may not be longer than 40 characters. "
)
ENABLED = {"katib.kubeflow.org/metrics-collector-injection": "enabled"}
POLICIES = ("Never", "LongRunning", "FromVolume")


def is_service_name(value: str) -> bool:
    return len(value) <= 63 and DNS1035_LABEL.fullmatch(value) is not None


def is_pv_name(value: str) -> bool:
    return len(value) <= 253 and DNS1123_SUBDOMAIN.fullmatch(value) is not None


def is_label_value(value: str) -> bool:
    return len(value) <= 63 and LABEL_VALUE.fullmatch(value) is not None


def katib_accepts(name: str) -> bool:
    return len(name) <= 40 and KATIB_NAME.match(name) is not None


def derives_valid_names(name: str, algorithm: str, namespace: str) -> bool:
    service = f"{name}-{algorithm}"
    pv = f"{service}-{namespace}"
    return is_service_name(service) and is_pv_name(pv) and is_label_value(name)


class Catalog:
    """katib-config knowing the algorithms whose name does not start with ``x``."""

    def suggestion(self, algorithm: str) -> object:
        if algorithm.startswith("x"):
            raise ConfigError(f"failed to find suggestion config for algorithm: {algorithm}")
        return algorithm

    def early_stopping(self, algorithm: str) -> object:
        return self.suggestion(algorithm)


# --- strategies ------------------------------------------------------------------------------

plain = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=45)
wide = st.text(alphabet=st.sampled_from("abcxyzABCXYZ0189-._ \n/é") | st.characters(), max_size=80)
near = st.text(alphabet="abz09-.A_", min_size=1, max_size=70)
long = st.integers(min_value=30, max_value=90).map(lambda n: "a" * n)
names = st.one_of(plain, near, wide, long)
namespaces = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)
counts = st.none() | st.integers() | st.integers(min_value=-3, max_value=30)
policies = st.none() | st.sampled_from(("", *POLICIES)) | st.text(max_size=12)
conditions = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["Created", "Running", "Restarting", "Succeeded", "Failed"]),
            "status": st.sampled_from(["True", "False", "Unknown"]),
            "reason": st.sampled_from(
                ["ExperimentMaxTrialsReached", "ExperimentGoalReached", "ExperimentFailed", ""]
            ),
        }
    ),
    max_size=3,
    unique_by=lambda c: c["type"],
)
json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def experiments(draw: st.DrawFn, name: st.SearchStrategy[str] = names) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "algorithm": {"algorithmName": draw(names)},
        "maxTrialCount": draw(counts),
        "parallelTrialCount": draw(counts),
        "maxFailedTrialCount": draw(counts),
        "resumePolicy": draw(policies),
        "objective": {
            "type": draw(st.sampled_from(["minimize", "maximize"])),
            "goal": draw(st.floats()),
        },
    }
    if draw(st.booleans()):
        spec["earlyStopping"] = {"algorithmName": draw(names)}
    for key in ("parameters", "metricsCollectorSpec", "trialTemplate"):
        if draw(st.booleans()):
            spec[key] = draw(json_like)
    status = {"conditions": draw(conditions), "trials": draw(st.integers())}
    meta = {"name": draw(name), "namespace": draw(namespaces)}
    return {"metadata": meta, "spec": spec, "status": status}


def build(data: dict[str, Any]) -> Experiment:
    return Experiment.model_validate(data)


# --- (a) every derived name of an admitted Experiment is a valid Kubernetes name ----------------


@settings(deadline=None)
@given(
    name=names,
    algorithm=names,
    namespace=namespaces,
    policy=st.sampled_from(POLICIES),
)
def test_admitted_experiments_derive_valid_names(
    name: str, algorithm: str, namespace: str, policy: str
) -> None:
    spec = {"algorithm": {"algorithmName": algorithm}, "resumePolicy": policy, "maxTrialCount": 5}
    exp = build({"metadata": {"name": name, "namespace": namespace}, "spec": spec})
    decision = validate(exp)
    event("admitted" if decision.allowed else "denied")
    if decision.allowed:
        assert is_service_name(service_name(name, algorithm))
        assert is_pv_name(pv_name(name, algorithm, namespace))
        assert is_label_value(name)
        assert is_label_value(service_name(name, algorithm))


# --- (a') a name Katib rejects is denied with Katib's message alone -----------------------------

ADMISSIBLE: dict[str, Any] = {  # admitted once defaulted, whatever its name (see (c) below)
    "resumePolicy": "FromVolume",
    "maxTrialCount": 5,
    "objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "parameters": [
        {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0", "max": "1"}}
    ],
}
algorithms = st.sampled_from(["random", "tpe", "bayesianoptimization"]) | names.filter(bool)


def admissible(name: str, algorithm: str, namespace: str) -> Experiment:
    spec = {**ADMISSIBLE, "algorithm": {"algorithmName": algorithm}, "trialTemplate": TEMPLATE}
    meta = {"name": name, "namespace": namespace}
    return default_experiment(build({"metadata": meta, "spec": spec}))


@settings(deadline=None)
@given(name=names, algorithm=algorithms, namespace=namespaces)
def test_a_name_katib_rejects_gets_exactly_katibs_message(
    name: str, algorithm: str, namespace: str
) -> None:
    """Katib's clients match its message: our derived-name reasons never join it."""
    decision = validate(admissible(name, algorithm, namespace), namespace_labels=ENABLED)
    event("Katib rejects" if not katib_accepts(name) else "Katib accepts")
    if not katib_accepts(name):
        expected = f"metadata.name: Invalid value: {go_quote(name)}: {KATIB_NAME_DETAIL}"
        assert decision.message == expected
        assert [(e.kind, e.field) for e in decision.errors] == [("Invalid", "metadata.name")]


katib_names = st.tuples(st.sampled_from("abcz"), names).map(lambda t: (t[0] + t[1])[:40])
"""Names Katib's rule accepts: a lower-case letter first, at most 40 characters."""


@settings(deadline=None)
@given(name=katib_names, algorithm=algorithms, namespace=namespaces)
def test_a_name_katib_accepts_is_denied_only_for_the_names_it_derives(
    name: str, algorithm: str, namespace: str
) -> None:
    """Past Katib's rule, the name is denied exactly when a derived name is invalid, and with
    our reasons only (Katib's message would be false there)."""
    assert katib_accepts(name)
    decision = validate(admissible(name, algorithm, namespace), namespace_labels=ENABLED)
    valid = derives_valid_names(name, algorithm, namespace)
    event("derived names valid" if valid else "a derived name invalid")
    assert decision.allowed == valid
    assert all(e.field == "metadata.name" for e in decision.errors)
    assert KATIB_NAME_DETAIL not in decision.message


# --- (b) validate is total: it returns a decision for anything ---------------------------------


@settings(deadline=None)
@given(
    new=experiments(),
    old=st.none() | experiments(),
    catalog=st.sampled_from([None, Catalog()]),
    labels=st.none() | st.just(ENABLED) | st.dictionaries(st.text(max_size=5), st.text(max_size=5)),
    pv_listed=st.booleans(),
)
def test_validate_never_raises(
    new: dict[str, Any],
    old: dict[str, Any] | None,
    catalog: Catalog | None,
    labels: dict[str, str] | None,
    pv_listed: bool,
) -> None:
    exp = build(new)
    algorithm = exp.spec.algorithm.algorithm_name
    pvs = {pv_name(exp.metadata.name, algorithm, exp.namespace)} if pv_listed else set()
    decision = validate(
        exp, build(old) if old else None, catalog=catalog, existing_pvs=pvs, namespace_labels=labels
    )
    assert isinstance(decision, Decision)
    assert decision.allowed == (not decision.errors)
    assert decision.allowed == (not decision.message)


# --- (c) editing what a completed Experiment does not allow to be edited is always denied --------

Mutation = Callable[[dict[str, Any]], None]


def _set_algorithm(spec: dict[str, Any]) -> None:
    spec["algorithm"] = {"algorithmName": spec["algorithm"]["algorithmName"] + "x"}


def _flip_policy(spec: dict[str, Any]) -> None:
    current = spec.get("resumePolicy") or "Never"
    spec["resumePolicy"] = POLICIES[(POLICIES.index(current) + 1) % len(POLICIES)]


def _flip_objective(spec: dict[str, Any]) -> None:
    kind = spec["objective"]["type"]
    spec["objective"] = {
        **spec["objective"],
        "type": "maximize" if kind == "minimize" else "minimize",
    }


def _add_parameter(spec: dict[str, Any]) -> None:
    spec["parameters"] = [*spec.get("parameters", []), {"name": "extra", "parameterType": "int"}]


def _change_collector(spec: dict[str, Any]) -> None:
    spec["metricsCollectorSpec"] = {"collector": {"kind": "File"}}


def _toggle_early_stopping(spec: dict[str, Any]) -> None:
    if spec.pop("earlyStopping", None) is None:
        spec["earlyStopping"] = {"algorithmName": "medianstop"}


def _change_template(spec: dict[str, Any]) -> None:
    spec["trialTemplate"] = {"primaryContainerName": "other", "trialParameters": []}


MUTATIONS: list[Mutation] = [
    _set_algorithm,
    _flip_policy,
    _flip_objective,
    _add_parameter,
    _change_collector,
    _toggle_early_stopping,
    _change_template,
]
valid_names = st.from_regex(r"[a-z]([-a-z0-9]{0,15}[a-z0-9])?", fullmatch=True)
completions = st.sampled_from(
    [
        {"type": "Succeeded", "status": "True", "reason": "ExperimentMaxTrialsReached"},
        {"type": "Succeeded", "status": "True", "reason": "ExperimentGoalReached"},
        {"type": "Failed", "status": "True", "reason": "ExperimentFailed"},
    ]
)


TEMPLATE = {  # a template admission accepts once defaulted (its Job's conditions)
    "primaryContainerName": "main",
    "trialParameters": [{"name": "rate", "reference": "lr"}],
    "trialSpec": {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "main", "args": ["${trialParameters.rate}"]}]}
            }
        },
    },
}


@st.composite
def completed_specs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], int]:
    spec: dict[str, Any] = {
        "algorithm": {"algorithmName": draw(valid_names)},
        "resumePolicy": draw(st.sampled_from(POLICIES)),
        "maxTrialCount": draw(st.integers(min_value=1, max_value=20)),
        "objective": {"type": "minimize", "objectiveMetricName": "loss"},
        "parameters": [
            {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0", "max": "1"}}
        ],
        "trialTemplate": TEMPLATE,
    }
    trials = draw(st.integers(min_value=0, max_value=spec["maxTrialCount"]))
    return spec, draw(completions), trials


@settings(deadline=None)
@given(
    case=completed_specs(),
    mutations=st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3, unique=True),
    budget=st.fixed_dictionaries(
        {}, optional={"maxTrialCount": counts, "parallelTrialCount": counts}
    ),
    labels=st.sampled_from([None, ENABLED]),
)
def test_changing_a_non_editable_field_of_a_completed_experiment_is_denied(
    case: tuple[dict[str, Any], dict[str, Any], int],
    mutations: list[Mutation],
    budget: dict[str, Any],
    labels: dict[str, str] | None,
) -> None:
    spec, completion, trials = case
    meta = {"name": "exp", "namespace": "ns"}
    old = build(
        {"metadata": meta, "spec": spec, "status": {"conditions": [completion], "trials": trials}}
    )
    new_spec = {**spec, **budget}
    for mutate in mutations:
        mutate(new_spec)
    decision = validate(build({"metadata": meta, "spec": new_spec}), old, namespace_labels=labels)
    assert not decision.allowed
    assert ("Forbidden", "spec") in [(e.kind, e.field) for e in decision.errors]


@settings(deadline=None)
@given(
    case=completed_specs(),
    raise_by=st.integers(min_value=1, max_value=10),
    parallel=st.none() | st.integers(min_value=1, max_value=3),
)
def test_raising_the_budget_of_a_restartable_experiment_is_allowed(
    case: tuple[dict[str, Any], dict[str, Any], int], raise_by: int, parallel: int | None
) -> None:
    spec, _, trials = case
    spec = {**spec, "resumePolicy": "FromVolume"}
    done = {"type": "Succeeded", "status": "True", "reason": "ExperimentMaxTrialsReached"}
    meta = {"name": "exp", "namespace": "ns"}
    old = build(
        {"metadata": meta, "spec": spec, "status": {"conditions": [done], "trials": trials}}
    )
    new_spec = {**spec, "maxTrialCount": trials + raise_by + 3, "parallelTrialCount": parallel}
    new = default_experiment(build({"metadata": meta, "spec": new_spec}))
    assert validate(new, default_experiment(old), namespace_labels=ENABLED).allowed
