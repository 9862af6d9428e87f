"""Admission of Experiments (Katib's validating webhook, docs/katib-contract.md#admission) as one
pure function.

The webhook adapter gathers what Katib's handler reads from the cluster (the old object on
UPDATE, the namespace's labels, the names of the PVs that exist, the katib-config catalog) and
``validate`` decides. Order and texts are Katib's, so clients and scripts see the same denials:

1. the namespace must carry ``katib.kubeflow.org/metrics-collector-injection: enabled``;
2. field errors, aggregated as Kubernetes does (one: its text; several: ``[e1, e2, ...]``, each
   text once): the name rule, the count rules (docs/katib-contract.md#count-rules), the restart
   rules (docs/katib-contract.md#restart-rules, UPDATE only), the objective (whose errors end
   the checks, as Katib's do), the algorithm and early-stopping names and their lookups in
   katib-config, the ``resumePolicy`` value (docs/katib-contract.md#resume-policy-values), then
   the trial template, the search space and the metrics collector
   (docs/katib-contract.md#field-rules: ``core.template_rules``, ``core.parameter_rules``,
   ``core.collector_rules``);
3. on CREATE with a policy that has a volume (``FromVolume``) and no field error: the PV
   ``<name>-<algorithm>-<namespace>`` must not exist yet (docs/katib-contract.md#stale-pv-check).

The object is checked as given: in the cluster the mutating webhook has already defaulted it
(``core.defaults``); the field rules expect what it fills in (a Job template's success and
failure conditions, a collector's source), so a caller with a raw object defaults it first
(``core.admission.admit`` does).

Where we are better than Katib, on purpose:

* Names from which Kubernetes would refuse the derived object names (a dot, an upper-case
  algorithm, ``<experiment>-<algorithm>`` over 63 characters) or the label values (a name ending
  in ``-``) are denied here instead of failing forever at reconcile time (bugs 20 and 25).
  Katib's own rule (only anchored at the start, at most 40 characters) comes first and keeps its
  message verbatim; a name it rejects gets that message alone, our reasons only follow its pass.
* Only what a user can edit is compared: both old and new are defaulted before comparing specs,
  so defaults added by a newer release never block a restart (bug 14).
* An UPDATE that leaves the defaulted spec unchanged (labels, finalizer removal at deletion) is
  allowed without any further check, namespace label and catalog lookups included: removing an
  algorithm from katib-config or the namespace label can never block deleting an Experiment.

As in Katib, a completed Experiment may be edited only if it is restartable (``is_restartable``),
and the edit may leave ``maxTrialCount`` unset. Katib's controller then restarts *any* completed
Experiment without ``maxTrialCount`` in an endless loop (bug 1); that is fixed in the controller,
which restarts only restartable Experiments, not here.

Denials that are not about a field (namespace label, PV) are reported as one ``Forbidden`` error
carrying Katib's message, so that ``allowed`` is always ``not errors``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from katib_resume.core.collector_rules import collector_errors
from katib_resume.core.config import ConfigError
from katib_resume.core.defaults import spec_view, without_editable
from katib_resume.core.field_errors import FieldError, forbidden, go_quote, invalid, required
from katib_resume.core.int32 import int32_overflows
from katib_resume.core.katib import LABEL_EXPERIMENT, NAMESPACE_INJECTION_LABEL
from katib_resume.core.model import Experiment
from katib_resume.core.model.experiment import ExperimentSpec
from katib_resume.core.names import derived_name_errors, pv_name
from katib_resume.core.objective_rules import objective_errors
from katib_resume.core.parameter_rules import space_errors
from katib_resume.core.policy import ResumePolicy, traits
from katib_resume.core.template_rules import template_errors

NAME_RULE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?")  # only anchored at the start, as Katib's
NAME_MAX = 40
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
LABEL_VALUE_MAX = 63
NAME_RULE_DETAIL = (
    "name must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123', regex used "
    "for validation is '^[a-z]([-a-z0-9]*[a-z0-9])?)') and may not be longer than 40 characters. "
)
RESTART_DETAIL = (
    "Experiment can be restarted if it is in succeeded state by reaching max trials and "
    "spec.resumePolicy = LongRunning or spec.resumePolicy = FromVolume, when experiment is "
    "completed"
)
AT_MOST_LIMIT = "should be less than or equal to spec.maxTrialCount"
EDITABLE_DETAIL = (
    "only spec.parallelTrialCount, spec.maxTrialCount and spec.maxFailedTrialCount are editable"
)
VALID_POLICIES = frozenset({"", *ResumePolicy})


class AlgorithmCatalog(Protocol):
    """The part of katib-config admission reads; both lookups raise ``ConfigError``."""

    def suggestion(self, algorithm: str) -> object: ...

    def early_stopping(self, algorithm: str) -> object: ...


@dataclass(frozen=True, slots=True)
class Decision:
    """The admission answer; ``message`` is Katib's aggregated text, empty when allowed."""

    allowed: bool
    message: str = ""
    errors: tuple[FieldError, ...] = ()


ALLOWED = Decision(allowed=True)


def validate(
    new: Experiment,
    old: Experiment | None = None,
    *,
    catalog: AlgorithmCatalog | None = None,
    existing_pvs: Container[str] = frozenset(),
    namespace_labels: Mapping[str, str] | None = None,
) -> Decision:
    """Admit or deny CREATE (``old`` is None) or UPDATE of ``new`` (see the module docstring)."""
    restart: list[FieldError] = []
    if old is not None:
        views = (spec_view(old), spec_view(new))
        if views[0] == views[1]:
            return ALLOWED
        restart = _restart_errors(new, old, views)
    if namespace_labels is not None and not _injection_enabled(namespace_labels):
        return deny([_namespace_error(new)])
    errors = [*_name_errors(new), *_count_errors(new.spec), *restart]
    errors += [invalid(*overflow) for overflow in int32_overflows(new.spec)]
    objective = objective_errors(new.spec.objective)
    if objective:  # Katib's validator stops at the objective
        return deny([*errors, *objective])
    errors += _catalog_errors(new.spec, catalog)
    errors += _policy_errors(new.spec)
    errors += _spec_field_errors(new.spec)
    if errors:
        return deny(errors)
    if old is None and _volume_exists(new, existing_pvs):
        return deny([_volume_error(new)])
    return ALLOWED


def is_restartable(exp: Experiment) -> bool:
    """Katib's ``IsCompletedExperimentRestartable``: Succeeded by max trials, restartable policy."""
    if not exp.completed_by_max_trials():
        return False
    try:
        policy = exp.spec.policy
    except ValueError:
        return False
    return traits(policy).restartable


def deny(errors: Iterable[FieldError]) -> Decision:
    unique = tuple(dict.fromkeys(errors))
    return Decision(allowed=False, message=aggregate([e.text for e in unique]), errors=unique)


def aggregate(texts: Iterable[str]) -> str:
    """Kubernetes' aggregated error text: each text once; one alone, several in brackets."""
    unique = list(dict.fromkeys(texts))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _name_errors(exp: Experiment) -> list[FieldError]:
    """Katib's rule first: a name it rejects gets its message alone, as Katib answers. Only a
    name it accepts is checked for the names derived from it (bugs 20 and 25)."""
    name = exp.metadata.name
    if NAME_RULE.match(name) is None or len(name) > NAME_MAX:
        return [invalid("metadata.name", name, NAME_RULE_DETAIL)]
    algorithm = exp.spec.algorithm.algorithm_name
    reasons = (*derived_name_errors(name, algorithm, exp.namespace), *_label_errors(name))
    return [invalid("metadata.name", name, reason) for reason in reasons]


def _label_errors(name: str) -> list[str]:
    """The name is the value of the ``katib.kubeflow.org/experiment`` label of every child.
    Its length needs no check: Katib's rule, which passed, allows fewer characters."""
    if LABEL_VALUE.fullmatch(name):
        return []
    return [
        f"the label value {go_quote(name)} ({LABEL_EXPERIMENT}) must be at most {LABEL_VALUE_MAX} "
        "characters, begin and end with an alphanumeric character and contain only "
        "alphanumerics, '-', '_' or '.'"
    ]


def _count_errors(spec: ExperimentSpec) -> list[FieldError]:
    limit, failed = spec.max_trial_count, spec.max_failed_trial_count
    parallel = spec.parallel_trial_count
    errors = []
    if failed is not None and failed < 0:
        errors.append(invalid("spec.maxFailedTrialCount", failed, "should not be less than 0"))
    if limit is not None and limit <= 0:
        errors.append(invalid("spec.maxTrialCount", limit, "must be greater than 0"))
    if parallel is not None and parallel <= 0:
        errors.append(invalid("spec.parallelTrialCount", parallel, "must be greater than 0"))
    if limit is not None:
        for field, count in (("maxFailedTrialCount", failed), ("parallelTrialCount", parallel)):
            if count is not None and count > limit:
                errors.append(invalid(f"spec.{field}", count, AT_MOST_LIMIT))
    return errors


def _restart_errors(
    new: Experiment, old: Experiment, views: tuple[dict[str, object], dict[str, object]]
) -> list[FieldError]:
    """docs/katib-contract.md#restart-rules, for an UPDATE whose defaulted spec changed (``views``:
    both ``spec_view``s, so each spec is defaulted and canonicalised once): the restart request
    itself."""
    errors = []
    if old.is_completed() and not is_restartable(old):
        errors.append(invalid("spec.resumePolicy", new.spec.resume_policy or "", RESTART_DETAIL))
    limit = new.spec.max_trial_count
    if limit is not None and limit <= old.status.trials:  # no budget (core.trials.has_budget)
        detail = "must be greater than status.trials count"
        errors.append(invalid("spec.maxTrialCount", limit, detail))
    if without_editable(views[0]) != without_editable(views[1]):
        errors.append(forbidden("spec", EDITABLE_DETAIL))
    return errors


def _catalog_errors(spec: ExperimentSpec, catalog: AlgorithmCatalog | None) -> list[FieldError]:
    """The algorithm and the early-stopping algorithm must be configured in katib-config."""
    named = [("spec.algorithm.algorithmName", spec.algorithm.algorithm_name)]
    if spec.early_stopping is not None:
        named.append(("spec.earlyStopping.algorithmName", spec.early_stopping.algorithm_name))
    errors = [required(field, "must be specified") for field, name in named if not name]
    if catalog is None:
        return errors
    lookups: list[tuple[str, str, Callable[[str], object]]] = [
        (
            field,
            name,
            catalog.suggestion if field.startswith("spec.algorithm") else catalog.early_stopping,
        )
        for field, name in named
    ]
    for field, name, lookup in lookups:
        try:
            lookup(name)
        except ConfigError as error:
            errors.append(invalid(field, name, str(error)))
    return errors


def _spec_field_errors(spec: ExperimentSpec) -> list[FieldError]:
    """The trial template, the search space and the metrics collector, in Katib's order."""
    extras = spec.model_extra or {}
    parameters = extras.get("parameters")
    return [
        *template_errors(extras.get("trialTemplate"), parameters),
        *space_errors(parameters, extras.get("nasConfig")),
        *collector_errors(extras.get("metricsCollectorSpec")),
    ]


def _policy_errors(spec: ExperimentSpec) -> list[FieldError]:
    raw = spec.resume_policy or ""
    if raw in VALID_POLICIES:
        return []
    return [invalid("spec.resumePolicy", raw, "invalid ResumePolicyType")]


def _injection_enabled(labels: Mapping[str, str]) -> bool:
    return labels.get(NAMESPACE_INJECTION_LABEL) == "enabled"


def _namespace_error(exp: Experiment) -> FieldError:
    text = (
        f'Cannot create the Experiment "{exp.metadata.name}" in namespace "{exp.namespace}": '
        f'the namespace lacks label "{NAMESPACE_INJECTION_LABEL}: enabled"'
    )
    return FieldError("Forbidden", "metadata.namespace", text)


def _volume_name(exp: Experiment) -> str:
    return pv_name(exp.metadata.name, exp.spec.algorithm.algorithm_name, exp.namespace)


def _volume_exists(exp: Experiment, existing_pvs: Container[str]) -> bool:
    """A policy with a volume would pre-bind a PV of that name: one left over is refused. Only
    asked once the policy is known valid (``_policy_errors`` comes first)."""
    return traits(exp.spec.policy).has_volume and _volume_name(exp) in existing_pvs


def volume_lookup_error(exp: Experiment, error: object) -> str:
    """Katib's denial when the PV of ``exp`` could not be looked up
    (docs/katib-contract.md#stale-pv-check)."""
    return (
        f"Cannot create the Experiment: {exp.metadata.name} in namespace: {exp.namespace}, "
        f"error: {error}"
    )


def _volume_error(exp: Experiment) -> FieldError:
    text = (
        f"Cannot create the Experiment: {exp.metadata.name} in namespace: {exp.namespace}, "
        f"PV: {_volume_name(exp)} is not deleted"
    )
    return FieldError("Forbidden", "metadata.name", text)
