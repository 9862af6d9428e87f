"""Defaulting of an Experiment (Katib's mutating webhook, ``Experiment.SetDefault``), made pure.

Why a module of its own: what this returns is what the cluster stores, and admission compares two
Experiments only after passing *both* through it. Katib compares a re-defaulted new spec with the
stored old one, so a newer release that adds a default (parameter ``distribution: uniform``)
turns every later edit of an old Experiment into "only ... are editable" (bug 14). Comparing
defaulted with defaulted makes such additions invisible. That only works if defaulting is

* idempotent: defaulting a defaulted Experiment returns it unchanged (a property test checks it);
* total: a value it does not understand (a parameter that is not a mapping, an unknown collector)
  is left alone, never an error; admission, not defaulting, judges values.

What is defaulted (docs/katib-contract.md#defaulting), each only when absent, null or empty:

* ``parallelTrialCount`` 3 and ``resumePolicy`` ``Never``;
* ``metricsCollectorSpec.collector`` ``{kind: StdOut}``;
* ``objective.metricStrategies``: one entry for the objective metric and for each additional
  metric that has none, ``min`` for ``minimize``, ``max`` for ``maximize`` and ``latest`` for
  any other type (Katib's rule). Katib re-appends the objective's entry on every pass when the
  objective also appears in ``additionalMetricNames``; here one entry per name, so it is idempotent;
* ``feasibleSpace.distribution`` ``uniform`` for every parameter;
* the metrics collector's source by kind (``collector_defaults``): ``File`` reads
  ``/var/log/katib/metrics.log`` as ``TEXT``, ``TensorFlowEvent`` the directory
  ``/var/log/katib/tfevent/``, ``PrometheusMetric`` ``/metrics`` on port 8080;
* an inline trial template's ``successCondition`` and ``failureCondition`` by its run kind, and
  for the Kubeflow training jobs and ``TrainJob`` its ``primaryPodLabels``
  (``template_defaults``): admission then requires both conditions, so a template of a kind
  Katib knows no conditions for must give its own.

``maxTrialCount`` and ``maxFailedTrialCount`` are never defaulted: unset means "no limit".

``spec_view`` is the comparison itself: the defaulted spec in a canonical form; ``without_editable``
leaves out of it the three fields a restart may edit (``EDITABLE_FIELDS``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from katib_resume.core.collector_defaults import default_source
from katib_resume.core.katib import DEFAULT_PARALLEL_TRIAL_COUNT
from katib_resume.core.model import Experiment
from katib_resume.core.model.experiment import ExperimentSpec, ObjectiveSpec
from katib_resume.core.policy import DEFAULT_POLICY
from katib_resume.core.template_defaults import default_template

METRICS_COLLECTOR_SPEC = "metricsCollectorSpec"
PARAMETERS = "parameters"
TRIAL_TEMPLATE = "trialTemplate"
STDOUT_COLLECTOR: Mapping[str, str] = {"kind": "StdOut"}
DISTRIBUTION_UNIFORM = "uniform"
STRATEGY_BY_OBJECTIVE_TYPE: Mapping[str, str] = {"minimize": "min", "maximize": "max"}
STRATEGY_OTHERWISE = "latest"
EDITABLE_FIELDS = frozenset({"maxTrialCount", "parallelTrialCount", "maxFailedTrialCount"})


def default_experiment(exp: Experiment) -> Experiment:
    """``exp`` with Katib's defaults filled in; ``exp`` itself when nothing was missing."""
    spec = _default_spec(exp.spec)
    return exp if spec is exp.spec else exp.model_copy(update={"spec": spec})


def _default_spec(spec: ExperimentSpec) -> ExperimentSpec:
    update: dict[str, Any] = {}
    if spec.parallel_trial_count is None:
        update["parallel_trial_count"] = DEFAULT_PARALLEL_TRIAL_COUNT
    if not spec.resume_policy:
        update["resume_policy"] = DEFAULT_POLICY.value
    if spec.objective is not None:
        objective = _default_objective(spec.objective)
        if objective is not spec.objective:
            update["objective"] = objective
    extras = spec.model_extra or {}
    collector = _default_collector(extras.get(METRICS_COLLECTOR_SPEC))
    if collector is not None:
        update[METRICS_COLLECTOR_SPEC] = collector
    parameters = _default_parameters(extras.get(PARAMETERS))
    if parameters is not None:
        update[PARAMETERS] = parameters
    template = default_template(extras.get(TRIAL_TEMPLATE))
    if template is not None:
        update[TRIAL_TEMPLATE] = template
    return spec.model_copy(update=update) if update else spec


def _default_objective(objective: ObjectiveSpec) -> ObjectiveSpec:
    """Append a strategy for every metric that has none (first occurrence of a name wins)."""
    value = STRATEGY_BY_OBJECTIVE_TYPE.get(objective.type or "", STRATEGY_OTHERWISE)
    seen = {  # only string names count: a name of another type is left for admission to judge
        s["name"]
        for s in objective.metric_strategies
        if isinstance(s, Mapping) and isinstance(s.get("name"), str)
    }
    added: list[dict[str, Any]] = []
    for name in (objective.objective_metric_name, *objective.additional_metric_names):
        if name is not None and name not in seen:
            seen.add(name)
            added.append({"name": name, "value": value})
    if not added:
        return objective
    strategies = (*objective.metric_strategies, *added)
    return objective.model_copy(update={"metric_strategies": strategies})


def _default_collector(spec: object) -> dict[str, Any] | None:
    """The defaulted ``metricsCollectorSpec``, or None when it needs nothing."""
    if spec is None:
        return {"collector": dict(STDOUT_COLLECTOR)}
    if not isinstance(spec, Mapping):
        return None
    given = spec if spec.get("collector") else {**spec, "collector": dict(STDOUT_COLLECTOR)}
    sourced = default_source(given)
    if sourced is not None:
        return sourced
    return None if given is spec else dict(given)


def _default_parameters(parameters: object) -> list[Any] | None:
    """The parameters with a distribution each, or None when none needed one."""
    if not isinstance(parameters, list):
        return None
    defaulted = [_default_parameter(p) for p in parameters]
    if all(new is old for new, old in zip(defaulted, parameters, strict=True)):
        return None
    return defaulted


def _default_parameter(parameter: object) -> object:
    if not isinstance(parameter, Mapping):
        return parameter
    space = parameter.get("feasibleSpace")
    if space is None:
        space = {}
    if not isinstance(space, Mapping) or space.get("distribution"):
        return parameter
    return {**parameter, "feasibleSpace": {**space, "distribution": DISTRIBUTION_UNIFORM}}


def spec_view(exp: Experiment) -> dict[str, object]:
    """What a user controls in ``exp.spec``, comparable with ``==``.

    Defaulted first (bug 14); then, as Kubernetes' semantic equality does for typed fields, an
    absent, null or empty value is no value, key order does not matter and NaN equals NaN.
    """
    dumped = default_experiment(exp).spec.model_dump(by_alias=True, mode="json")
    view = _canonical(dumped)
    assert isinstance(view, dict)
    return view


def without_editable(view: dict[str, object]) -> dict[str, object]:
    """A ``spec_view`` without the fields a restart may edit: what a restart must leave alone
    (the view's keys are the spec's top-level fields)."""
    return {key: value for key, value in view.items() if key not in EDITABLE_FIELDS}


def _canonical(value: object) -> object:
    # the plain types first: a dump holds only dicts, lists and scalars, and ``Mapping`` is an
    # ABC whose ``isinstance`` costs several times a check of a concrete type
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, dict | Mapping):
        pairs = ((str(k), _canonical(v)) for k, v in value.items())
        return {k: v for k, v in pairs if not _is_empty(v)}
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def _is_empty(value: object) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)
