"""Admission's search-space rules (Katib's ``validateParameters`` and the rule that a space is
given, docs/katib-contract.md#field-rules): what the suggestion service cannot search is denied
before anything is created, with Katib's texts.

Parameters are read as decoded JSON (the model keeps them as an extra); a value of the wrong
shape counts as absent, as Go's decoder would have refused it before Katib's rules ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from katib_resume.core.field_errors import (
    FieldError,
    go_quote,
    go_strings,
    invalid,
    invalid_shown,
    required,
)

TYPES = frozenset({"int", "double", "categorical", "discrete", "unknown"})
DISTRIBUTIONS = frozenset({"uniform", "logUniform", "normal", "logNormal", "unknown"})
RANGED = frozenset({"int", "double"})
LISTED = frozenset({"categorical", "discrete"})
SPACE_FIELDS = ("max", "min", "list", "step", "distribution")  # Katib's FeasibleSpace, in order


def space_errors(parameters: object, nas_config: object) -> list[FieldError]:
    """A search space must be given, by ``parameters`` or ``nasConfig`` and not both."""
    given = parameters if isinstance(parameters, list) else []
    if not given and nas_config is None:
        return [required("spec", "spec.parameters or spec.nasConfig must be specified")]
    if given and nas_config is not None:
        detail = "only one of spec.parameters and spec.nasConfig can be specified"
        return [invalid_shown("spec", "v1beta1.ExperimentSpec{...}", detail)]
    return [error for i, parameter in enumerate(given) for error in _parameter(i, parameter)]


def _parameter(index: int, parameter: object) -> list[FieldError]:
    path = f"spec.parameters[{index}]"
    given = parameter if isinstance(parameter, Mapping) else {}
    kind = _text(given.get("parameterType"))
    space = given.get("feasibleSpace")
    space = space if isinstance(space, Mapping) else {}
    errors = []
    if kind not in TYPES:
        detail = f"parameterType: {kind} is not supported"
        errors.append(invalid(f"{path}.parameterType", kind, detail))
    distribution = _text(space.get("distribution"))
    if distribution and distribution not in DISTRIBUTIONS:
        detail = f"distribution: {distribution} is not supported"
        errors.append(invalid(f"{path}.feasibleSpace.distribution", distribution, detail))
    values = _list(space.get("list"))
    if not values and not any(_text(space.get(f)) for f in ("max", "min", "step", "distribution")):
        return [*errors, required(f"{path}.feasibleSpace", "feasibleSpace must be specified")]
    if kind in RANGED:
        if values:
            detail = f"feasibleSpace.list is not supported for parameterType: {kind}"
            errors.append(invalid_shown(f"{path}.feasibleSpace.list", go_strings(values), detail))
        if not _text(space.get("max")) or not _text(space.get("min")):
            detail = (
                "feasibleSpace.max or feasibleSpace.min must be specified for parameterType: "
                + kind
            )
            errors.append(required(f"{path}.feasibleSpace.max", detail))
    elif kind in LISTED and any(_text(space.get(f)) for f in ("max", "min", "step")):
        detail = f"feasibleSpace .max, .min and .step is not supported for parameterType: {kind}"
        errors.append(invalid_shown(f"{path}.feasibleSpace", _go_space(space), detail))
    return errors


def go_parameters(parameters: object) -> list[Any]:
    """``spec.parameters`` as Go's ``%v`` walks it: ``{name type {max min [list] step dist}}``."""
    given = parameters if isinstance(parameters, list) else []
    rows: list[Any] = []
    for parameter in given:
        p = parameter if isinstance(parameter, Mapping) else {}
        space = p.get("feasibleSpace")
        space = space if isinstance(space, Mapping) else {}
        fields = tuple(
            [_text(v) for v in _list(space.get(f))] if f == "list" else _text(space.get(f))
            for f in SPACE_FIELDS
        )
        rows.append((_text(p.get("name")), _text(p.get("parameterType")), fields))
    return rows


def _go_space(space: Mapping[str, Any]) -> str:
    """Go's ``%#v`` of a ``FeasibleSpace``."""
    shown = []
    for field in SPACE_FIELDS:
        value = space.get(field)
        if field == "list":
            shown.append(f"List:{go_strings(_list(value) or None)}")
        else:
            shown.append(f"{field.capitalize()}:{go_quote(_text(value))}")
    return "v1beta1.FeasibleSpace{" + ", ".join(shown) + "}"


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _list(value: object) -> Sequence[object]:
    return value if isinstance(value, list) else []
