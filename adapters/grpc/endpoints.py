"""Where a Suggestion's service answers: Katib's ``<name>-<algorithm>.<namespace>:6789``.

The address is a template, so that tests and a controller run outside the cluster (through
``kubectl port-forward``) can point it elsewhere. Its placeholders: ``{service}`` (the Service's
name, ``<name>-<algorithm>``), ``{name}`` (the Suggestion's, which is the Experiment's),
``{algorithm}`` and ``{namespace}``. A template is checked once, when it is given, so a typo is
a clear error at start-up rather than a failed call per Experiment.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from katib_resume.core.addresses import EARLY_STOPPING_ENDPOINT, SUGGESTION_ENDPOINT
from katib_resume.core.model import Suggestion
from katib_resume.core.names import service_name

PLACEHOLDERS = ("service", "name", "algorithm", "namespace")


def check_template(template: str) -> str:
    """``template`` itself, or ``ValueError`` saying what is wrong with it."""
    try:
        fields = [
            field for _, field, _, _ in string.Formatter().parse(template) if field is not None
        ]
    except ValueError as error:
        raise ValueError(f"invalid endpoint template {template!r}: {error}") from None
    for field in fields:
        if field not in PLACEHOLDERS:
            known = ", ".join("{" + name + "}" for name in PLACEHOLDERS)
            raise ValueError(
                f"unknown placeholder {{{field}}} in endpoint template {template!r}"
                f" (known: {known})"
            )
    if not template.strip():
        raise ValueError("the endpoint template is empty")
    return template


@dataclass(frozen=True, slots=True)
class Endpoints:
    """The templates of the algorithm service (``Suggestion``) and of early stopping."""

    suggestion: str = SUGGESTION_ENDPOINT
    early_stopping: str = EARLY_STOPPING_ENDPOINT

    def __post_init__(self) -> None:
        check_template(self.suggestion)
        check_template(self.early_stopping)

    def algorithm_of(self, suggestion: Suggestion) -> str:
        return _fill(self.suggestion, suggestion)

    def early_stopping_of(self, suggestion: Suggestion) -> str:
        return _fill(self.early_stopping, suggestion)


def _fill(template: str, suggestion: Suggestion) -> str:
    name, algorithm = suggestion.name, suggestion.algorithm
    return template.format(
        service=service_name(name, algorithm),
        name=name,
        algorithm=algorithm,
        namespace=suggestion.namespace,
    )
