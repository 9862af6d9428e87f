"""The two lifecycles, each a ``transitions`` machine declared once and compiled at import."""

from katib_resume.core.lifecycle.experiment import EXPERIMENT, ExperimentFacts, ExperimentState
from katib_resume.core.lifecycle.machine import IllegalTransition, Lifecycle, Transition
from katib_resume.core.lifecycle.suggestion import (
    SUGGESTION,
    Marks,
    SuggestionFacts,
    SuggestionState,
)

LIFECYCLES: dict[str, Lifecycle[ExperimentState] | Lifecycle[SuggestionState]] = {
    "suggestion": SUGGESTION,
    "experiment": EXPERIMENT,
}

__all__ = [
    "EXPERIMENT",
    "LIFECYCLES",
    "SUGGESTION",
    "ExperimentFacts",
    "ExperimentState",
    "IllegalTransition",
    "Lifecycle",
    "Marks",
    "SuggestionFacts",
    "SuggestionState",
    "Transition",
]
