"""Trial parameters that reference the Trial's metadata (``core.trial_meta``): rendered into each
Trial's run spec as Katib's trial-metadata-substitution example expects, and denied at admission
when no Trial could ever resolve them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.defaults import default_experiment
from katib_resume.core.desired import desired_trial
from katib_resume.core.model import Experiment
from katib_resume.core.trial_meta import MetaReference, parse, unresolvable, value
from katib_resume.core.validation import validate

EXAMPLE = Path(__file__).parents[2] / "examples" / "from-volume-resume.yaml"
RAW: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
META = {
    "trialName": "${trialSpec.Name}",
    "trialNamespace": "${trialSpec.Namespace}",
    "runKind": "${trialSpec.Kind}",
    "runVersion": "${trialSpec.APIVersion}",
    "team": "${trialSpec.Labels[team]}",
    "owner": "${trialSpec.Annotations[example.com/owner]}",
}


def with_meta(references: dict[str, str] = META) -> dict[str, Any]:
    """The example with trial parameters for ``references`` and an env var of each placeholder;
    its run template labelled ``team: a`` and annotated ``example.com/owner: b``."""
    raw = copy.deepcopy(RAW)
    template = raw["spec"]["trialTemplate"]
    template["trialParameters"] += [{"name": n, "reference": r} for n, r in references.items()]
    template["trialSpec"]["metadata"] = {
        "labels": {"team": "a"},
        "annotations": {"example.com/owner": "b"},
    }
    container = template["trialSpec"]["spec"]["template"]["spec"]["containers"][0]
    container["env"] = [{"name": n, "value": f"${{trialParameters.{n}}}"} for n in references]
    return raw


def experiment(raw: dict[str, Any]) -> Experiment:
    return default_experiment(Experiment.model_validate(raw))


def rendered_env(raw: dict[str, Any]) -> dict[str, str]:
    exp = experiment(raw)
    assignment = {
        "name": "exp-abc12345",
        "parameterAssignments": [
            {"name": p["name"], "value": "0.5"} for p in raw["spec"]["parameters"]
        ],
    }
    run = desired_trial(exp, assignment)["spec"]["runSpec"]
    env = run["spec"]["template"]["spec"]["containers"][0]["env"]
    return {e["name"]: e["value"] for e in env}


def test_each_metadata_reference_renders_the_trials_or_its_templates_value() -> None:
    assert rendered_env(with_meta()) == {
        "trialName": "exp-abc12345",
        "trialNamespace": RAW["metadata"]["namespace"],
        "runKind": "Job",
        "runVersion": "batch/v1",
        "team": "a",
        "owner": "b",
    }


def test_an_index_on_a_key_that_is_no_map_is_ignored_as_katib_ignores_it() -> None:
    assert rendered_env(with_meta({"n": "${trialSpec.Name[x]}"})) == {"n": "exp-abc12345"}


def test_references_that_resolve_are_admitted() -> None:
    assert validate(experiment(with_meta())).allowed


def test_a_label_or_annotation_the_template_lacks_is_denied_with_katibs_text() -> None:
    raw = with_meta({"a": "${trialSpec.Labels[nope]}", "b": "${trialSpec.Annotations[gone]}"})
    decision = validate(experiment(raw))
    first = len(RAW["spec"]["trialTemplate"]["trialParameters"])
    path = "spec.trialTemplate.trialParameters"
    assert [e.text for e in decision.errors] == [
        f'{path}[{first}].reference: Invalid value: "${{trialSpec.Labels[nope]}}": '
        "illegal reference of trial metadata: ${trialSpec.Labels[nope]}; failed to fetch "
        "Label: nope",
        f'{path}[{first + 1}].reference: Invalid value: "${{trialSpec.Annotations[gone]}}": '
        "illegal reference of trial metadata: ${trialSpec.Annotations[gone]}; failed to fetch "
        "Annotation: gone",
    ]


def test_an_unknown_metadata_key_is_a_missing_parameter_as_in_katib() -> None:
    decision = validate(experiment(with_meta({"x": "${trialSpec.Uid}"})))
    assert "parameter reference ${trialSpec.Uid} does not exist in spec.parameters" in (
        decision.message
    )


KEYS = st.text(alphabet="abcxyz./-", min_size=1, max_size=6)


@given(labels=st.dictionaries(KEYS, st.text(max_size=4), max_size=4), key=KEYS)
def test_a_label_resolves_exactly_when_the_template_carries_it(
    labels: dict[str, str], key: str
) -> None:
    run = {"metadata": {"labels": labels}}
    reference = f"${{trialSpec.Labels[{key}]}}"
    assert parse(reference) == MetaReference("Labels", key)
    assert value(MetaReference("Labels", key), "t", "ns", run) == labels.get(key)
    assert (unresolvable(reference, run) is None) == (key in labels)


@given(st.text(max_size=12))
def test_a_reference_without_a_trialspec_placeholder_names_a_parameter(reference: str) -> None:
    if "${trialSpec." not in reference:
        assert parse(reference) is None
        assert unresolvable(reference, {}) is None
