"""Objective values that are not finite, case by case: where they come from (a metric's text, over
the embedded driver and over gRPC), how a cursor keeps them, and what each rule does with them.
The property tests (``tests/property/test_nonfinite_results.py``) hold every algorithm to it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer, nonfinite
from katib_resume.adapters.local.suggestion.bayesian import _clipped
from katib_resume.adapters.local.suggestion.medianstop import MedianStop, rules
from katib_resume.adapters.local.suggestion.pbt_record import sound
from katib_resume.adapters.local.suggestion.pbt_rules import quantile
from katib_resume.adapters.local.suggestion.results import trial_results
from katib_resume.adapters.local.suggestion.state_store import StateStore
from katib_resume.app.suggestion import trial_memo
from katib_resume.core.model import Experiment, Trial

INF, NAN = math.inf, math.nan


def experiment(algorithm: str, settings: dict[str, str] | None = None) -> Experiment:
    spec = {
        "parallelTrialCount": 9,
        "algorithm": {
            "algorithmName": algorithm,
            "algorithmSettings": [{"name": k, "value": v} for k, v in (settings or {}).items()],
        },
        "objective": {"type": "minimize", "objectiveMetricName": "loss"},
        "parameters": [
            {"name": "r", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "9"}},
            {"name": "x", "parameterType": "double", "feasibleSpace": {"min": "0", "max": "1"}},
        ],
    }
    return Experiment.model_validate({"metadata": {"name": "e", "namespace": "ns"}, "spec": spec})


def test_a_tpe_search_told_an_infinity_saves_and_restores_it(tmp_path: Path) -> None:
    """Issue 13's case: a Trial that logged ``loss=1e999`` crashed the save."""
    subject = experiment("tpe")
    server = SuggestionServer(subject, 1, tmp_path)
    server.start([])
    held = server.get_suggestions([], 3)
    results = {held[0]["name"]: float("1e999"), held[1]["name"]: -INF, held[2]["name"]: NAN}
    held += server.get_suggestions(held, 4, results)
    told = StateStore(tmp_path / FILE_NAME).load().cursor["told"]  # snapshot and journal
    assert told.entries() == ["inf", "-inf", None]
    restarted = SuggestionServer(subject, 1, tmp_path)
    assert restarted.start(held).source == "restored"
    assert restarted.get_suggestions(held, 5, results) == server.get_suggestions(held, 5, results)


def test_a_result_the_search_cannot_take_leaves_the_state_as_it_was(tmp_path: Path) -> None:
    """A draw that fails half-way (here a result that is no number: it told the ones before)
    raises, and the next call answers as a server that never saw it (the live study, ahead
    of the saved state, is dropped as after a failed save)."""
    subject = experiment("tpe")
    server, reference = SuggestionServer(subject, 1, tmp_path), SuggestionServer(subject, 1, None)
    server.start([])
    reference.start([])
    held = server.get_suggestions([], 3)
    assert reference.get_suggestions([], 3) == held
    bad: dict[str, Any] = {held[0]["name"]: 1.0, held[1]["name"]: "x"}
    with pytest.raises(ValueError, match="could not convert"):
        server.get_suggestions(held, 4, bad)
    good = {held[0]["name"]: 1.0, held[1]["name"]: 2.0}
    assert server.get_suggestions(held, 4, good) == reference.get_suggestions(held, 4, good)


def hyperband_rung_waits_for(value: float | None) -> bool:
    """Whether hyperband, its first rung finished with one Trial's result ``value``, still
    waits for that rung (issues nothing)."""
    subject = experiment("hyperband", {"r_l": "4", "eta": "2", "resource_name": "r"})
    server = SuggestionServer(subject, 0, None)
    server.start([])
    rung = server.get_suggestions([], 9)
    results: dict[str, float | None] = {a["name"]: 1.0 + i for i, a in enumerate(rung)}
    results[rung[0]["name"]] = value
    return not server.get_suggestions(rung, len(rung) + 1, results)


def test_a_trial_that_finished_with_nan_is_a_failure_not_a_trial_to_wait_for() -> None:
    """Over the embedded driver (``trial_results``) and over gRPC (``trial_memo``) a NaN objective
    is passed on, and the server takes it as a failure: hyperband's rung is complete."""
    subject = experiment("hyperband", {"r_l": "4", "eta": "2", "resource_name": "r"})
    trials = {
        "nan": _trial("nan", "Succeeded", "nan"),
        "inf": _trial("inf", "Succeeded", "inf"),
        "big": _trial("big", "EarlyStopped", "1e999"),
        "go": _trial("go", "Succeeded", "-Inf"),  # Go's spelling, as Katib's collector writes
        "go-nan": _trial("go-nan", "Succeeded", "NaN"),
        "unavailable": _trial("unavailable", "Succeeded", "unavailable"),
    }
    embedded = trial_results(subject, [Trial.model_validate(t) for t in trials.values()])
    wire = [_wire(t) for t in trials.values()]
    over_grpc = trial_memo.results([trial_memo.known(t, "loss") for t in wire])
    for results in (embedded, over_grpc):
        assert set(results) == {"nan", "inf", "big", "go", "go-nan"}  # "unavailable": none yet
        assert math.isnan(results["nan"] or 0.0) and math.isnan(results["go-nan"] or 0.0)
        assert results["inf"] == results["big"] == -(results["go"] or 0.0) == INF
    assert not hyperband_rung_waits_for(NAN)
    assert not hyperband_rung_waits_for(None)


def test_hyperband_ranks_nan_as_a_failure_and_infinities_as_values() -> None:
    subject = experiment("hyperband", {"r_l": "4", "eta": "2", "resource_name": "r"})

    def next_rung(first: float | None) -> list[object]:
        server = SuggestionServer(subject, 0, None)
        server.start([])
        rung = server.get_suggestions([], 9)
        results: dict[str, float | None] = {a["name"]: 1.0 + i for i, a in enumerate(rung)}
        results[rung[0]["name"]] = first
        later = server.get_suggestions(rung, 14, results)
        return [a["parameterAssignments"] for a in later]

    assert next_rung(NAN) == next_rung(None) == next_rung(INF) != next_rung(-INF)
    assert next_rung(-INF) == next_rung(-1e300)


def test_the_median_rule_leaves_nan_out_and_keeps_infinities() -> None:
    settings = MedianStop(min_trials_required=3, start_step=1)
    assert rules(settings, "m", False, {"a": 1.0, "b": NAN, "c": 3.0}) == []  # two values
    rule = rules(settings, "m", False, {"a": 1.0, "b": NAN, "c": 3.0, "d": INF})
    assert rule[0]["value"] == "3.0"
    assert rules(settings, "m", True, {"a": INF, "b": INF, "c": 1.0})[0]["value"] == "inf"
    assert rules(settings, "m", True, {"a": -INF, "b": INF, "c": -INF, "d": INF}) == []


def test_pbt_quantile_between_an_infinity_and_a_value() -> None:
    """The members at or above the bound are those at or above it with a finite value in
    the infinity's place (NumPy's interpolation gives NaN for the first two)."""
    assert quantile([-INF, 1.0, 2.0], 0.25) == 1.0
    assert quantile([1.0, -INF, INF], 0.75) == INF
    assert quantile([INF, INF], 0.5) == INF
    assert quantile([1.0, INF], 0.0) == 1.0
    assert quantile([1.0, 2.0, 4.0], 0.75) == 3.0  # finite: NumPy's interpolation


def test_a_pbt_record_holds_the_infinities_as_text() -> None:
    record = {"starts": [0, 5], "parents": [-1] * 5, "pools": [["inf", "-inf", None, 1, 0.5]]}
    assert sound(record, 5)
    assert not sound({**record, "pools": [["nan", "-inf", None, 1, 0.5]]}, 5)
    assert not sound({**record, "pools": [[INF, "-inf", None, 1, 0.5]]}, 5)


def test_bayesian_losses_clip_infinities_to_the_finite_extremes() -> None:
    """As Optuna's ``GPSampler`` (``warn_and_convert_inf``)."""
    assert _clipped([1.0, INF, -INF, 3.0]) == [1.0, 3.0, 1.0, 3.0]
    assert _clipped([INF, -INF]) == [0.0, 0.0]
    losses = [1.0, 2.0]
    assert _clipped(losses) is losses


values = st.none() | st.floats() | st.integers(-(2**70), 2**70)


@example([1e308, 1e308, NAN]).via("a sum that overflows to inf hides nothing")
@example([INF, -INF]).via("inf meets -inf: a false alarm")
@given(st.lists(values))
def test_has_nan_is_never_false_when_a_nan_is_there(drawn: list[Any]) -> None:
    if any(isinstance(v, float) and math.isnan(v) for v in drawn):
        assert nonfinite.has_nan(drawn)
    admitted = [nonfinite.admitted(v) for v in drawn]
    assert not any(isinstance(v, float) and math.isnan(v) for v in admitted)


@given(st.none() | st.floats(allow_nan=False) | st.integers())
def test_a_stored_value_is_json_and_reads_back_exactly(value: float | None) -> None:
    kept = nonfinite.stored(value)
    text = json.dumps(kept, allow_nan=False)
    back = nonfinite.value_of(json.loads(text, parse_constant=_refused))
    assert back == value and type(back) is type(value)
    assert nonfinite.values_of([kept]) == [back]


def _refused(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _trial(name: str, phase: str, loss: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Trial",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "labels": {"katib.kubeflow.org/experiment": "e"},
        },
        "spec": {},
        "status": {
            "conditions": [{"type": phase, "status": "True"}],
            "observation": {"metrics": [{"name": "loss", "min": loss, "latest": loss}]},
        },
    }


def _wire(trial: dict[str, Any]) -> dict[str, Any]:
    """The Trial as the gRPC codec gives it to the service (one value per metric)."""
    metric = trial["status"]["observation"]["metrics"][0]
    return {
        "metadata": trial["metadata"],
        "spec": {},
        "status": {
            "condition": trial["status"]["conditions"][0]["type"],
            "observation": {"metrics": [{"name": "loss", "value": metric["min"]}]},
        },
    }
