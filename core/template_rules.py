"""Admission's trial-template rules (Katib's ``validateTrialTemplate``,
docs/katib-contract.md#field-rules): a template the controller could not turn into Trials is
denied before anything is created, in Katib's order and with its texts (several of them stop
the checks, as Katib's do).

Where we differ, on purpose: a template from a ConfigMap (``configMap``) is denied with a
message that says it is not supported, where Katib would read the ConfigMap; and Katib's check
that a ``batch/v1`` Job template converts to a typed Job without losing a field is not made.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from katib_resume.core.field_errors import FieldError, forbidden, go_v, invalid, required
from katib_resume.core.parameter_rules import go_parameters
from katib_resume.core.trial_meta import parse, unresolvable

PATH: Final = "spec.trialTemplate"
PARAMETERS_PATH: Final = f"{PATH}.trialParameters"
PLACEHOLDER: Final = "${{trialParameters.{}}}"
LEFT_OVER: Final = re.compile(r"\$\{trialParameters\..+?\}")
CONFIG_MAP_FIELDS: Final = ("configMapName", "configMapNamespace", "templatePath")
NOT_FROM_CONFIG_MAP: Final = (
    "katib-resume runs inline trial templates only: give the template as "
    "spec.trialTemplate.trialSpec"
)


def template_errors(template: object, parameters: object) -> list[FieldError]:
    if template is None:
        return [required(PATH, "must be specified")]
    given: Mapping[str, Any] = template if isinstance(template, Mapping) else {}
    errors = []
    if not given.get("primaryContainerName"):
        errors.append(required(f"{PATH}.primaryContainerName", "must be specified"))
    if not given.get("successCondition") or not given.get("failureCondition"):
        errors.append(required(PATH, "successCondition and failureCondition must be specified"))
    source = _source_errors(given)
    if source is not None:
        return [*errors, *source]
    return [*errors, *_parameters_errors(given, parameters)]


def _source_errors(template: Mapping[str, Any]) -> list[FieldError] | None:
    """Errors that stop the checks: no trial parameters, no source or two, a ConfigMap."""
    if template.get("trialParameters") is None:
        return [required(PARAMETERS_PATH, "must be specified")]
    spec, config_map = template.get("trialSpec"), template.get("configMap")
    if spec is None and config_map is None:
        detail = "spec.trialTemplate.trialSpec or spec.trialTemplate.configMap must be specified"
        return [required(f"{PATH}.TrialSource", detail)]
    if spec is not None and config_map is not None:
        detail = (
            "only one of spec.trialTemplate.trialSpec or spec.trialTemplate.configMap can be "
            "specified"
        )
        return [required(PATH, detail)]
    if config_map is not None:
        fields = config_map if isinstance(config_map, Mapping) else {}
        if not all(fields.get(name) for name in CONFIG_MAP_FIELDS):
            detail = "configMapName, configMapNamespace and templatePath must be specified"
            return [required(f"{PATH}.configMap", detail)]
        return [forbidden(f"{PATH}.configMap", NOT_FROM_CONFIG_MAP)]
    return None


def _parameters_errors(template: Mapping[str, Any], parameters: object) -> list[FieldError]:
    """Each trial parameter names a parameter (or the Trial's metadata) and a placeholder of the
    template; every placeholder is one's; then the run object's own fields."""
    entries = template["trialParameters"]
    entries = entries if isinstance(entries, list) else []
    shown = _go_trial_parameters(entries)
    known = {row[0] for row in go_parameters(parameters)}
    run = template["trialSpec"] if isinstance(template["trialSpec"], Mapping) else {}
    text = go_json(template["trialSpec"])
    names: set[str] = set()
    references: set[str] = set()
    errors: list[FieldError] = []
    for i, entry in enumerate(entries):
        path = f"{PARAMETERS_PATH}[{i}]"
        name, reference = _field(entry, "name"), _field(entry, "reference")
        if not name or not reference or "{" in name or "}" in name:
            detail = "name and reference must be specified and name must not contain '{' or '}'"
            errors.append(invalid(path, "", detail))
            continue
        if name in names or reference in references:
            field, value = ("name", name) if name in names else ("reference", reference)
            detail = f"parameter {field} {value} can't be duplicated in {PARAMETERS_PATH}: {shown}"
            errors.append(invalid(f"{path}.{field}", value, detail))
            continue
        names.add(name)
        references.add(reference)
        if known and parse(reference) is None and reference not in known:
            detail = (
                f"parameter reference {reference} does not exist in spec.parameters: "
                f"{_go_v_rows(go_parameters(parameters))}"
            )
            errors.append(invalid(f"{path}.reference", reference, detail))
        never = unresolvable(reference, run)
        if never is not None:
            errors.append(invalid(f"{path}.reference", reference, never))
        placeholder = PLACEHOLDER.format(name)
        if placeholder not in text:
            detail = f"parameter name: {name} in spec.trialParameters not found in {PATH}: {text}"
            return [*errors, invalid(f"{path}.name", name, detail)]
        text = text.replace(placeholder, "test-value")
    left = LEFT_OVER.findall(text)
    if left:
        detail = (
            f"parameters: [{' '.join(left)}] in {PATH} not found in spec.trialParameters: {shown}"
        )
        errors.append(invalid(PATH, "", detail))
    return [*errors, *_run_errors(template["trialSpec"])]


def _run_errors(run: object) -> list[FieldError]:
    given: Mapping[str, Any] = run if isinstance(run, Mapping) else {}
    metadata = given.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    errors = []
    if metadata.get("name") or metadata.get("namespace"):
        detail = f"metadata.name and metadata.namespace in {PATH} must be omitted"
        errors.append(invalid(PATH, "", detail))
    if not given.get("apiVersion") or not given.get("kind"):
        errors.append(required(PATH, f"APIVersion and Kind in {PATH} must be specified"))
    return errors


def go_json(value: object) -> str:
    """``encoding/json``'s text of a decoded object: keys sorted, no spaces, and ``<``, ``>``
    and ``&`` escaped as Go escapes them."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _field(entry: object, key: str) -> str:
    value = entry.get(key) if isinstance(entry, Mapping) else None
    return value if isinstance(value, str) else ""


def _go_trial_parameters(entries: list[Any]) -> str:
    """Go's ``%v`` of the trial parameters: ``[{name description reference} ...]``."""
    rows = [(_field(e, "name"), _field(e, "description"), _field(e, "reference")) for e in entries]
    return _go_v_rows(rows)


def _go_v_rows(rows: list[Any]) -> str:
    return go_v(rows)
