"""The three lifecycles, each a ``transitions`` machine declared once and compiled at import."""

from katib_resume.core.lifecycle.experiment import EXPERIMENT, ExperimentFacts, ExperimentState
from katib_resume.core.lifecycle.machine import IllegalTransition, Lifecycle, Transition
from katib_resume.core.lifecycle.suggestion import (
    SUGGESTION,
    Marks,
    SuggestionFacts,
    SuggestionState,
)
from katib_resume.core.lifecycle.trial import TRIAL, TrialFacts, TrialState

LIFECYCLES: dict[
    str, Lifecycle[ExperimentState] | Lifecycle[SuggestionState] | Lifecycle[TrialState]
] = {
    "suggestion": SUGGESTION,
    "experiment": EXPERIMENT,
    "trial": TRIAL,
}

__all__ = [
    "EXPERIMENT",
    "LIFECYCLES",
    "SUGGESTION",
    "TRIAL",
    "ExperimentFacts",
    "ExperimentState",
    "IllegalTransition",
    "Lifecycle",
    "Marks",
    "SuggestionFacts",
    "SuggestionState",
    "Transition",
    "TrialFacts",
    "TrialState",
]
