"""The three lifecycles (Suggestion, Experiment, Trial), each declared once as data: a
``transitions`` machine (the graph, compiled at import), a per-state table (recognition, marks,
what the state needs) and an ordered list of trigger detectors, all three in the vocabulary of
``states``."""

from katib_resume.core.lifecycle.experiment import EXPERIMENT, ExperimentFacts, ExperimentState
from katib_resume.core.lifecycle.machine import IllegalTransition, Lifecycle, Transition
from katib_resume.core.lifecycle.states import Detector, StateSpec, StateTable
from katib_resume.core.lifecycle.suggestion import (
    SUGGESTION,
    Asks,
    Holds,
    Marks,
    SuggestionFacts,
    SuggestionSignals,
    SuggestionState,
)
from katib_resume.core.lifecycle.trial import TRIAL, TrialFacts, TrialSignals, TrialState

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
    "Asks",
    "Detector",
    "ExperimentFacts",
    "ExperimentState",
    "Holds",
    "IllegalTransition",
    "Lifecycle",
    "Marks",
    "StateSpec",
    "StateTable",
    "SuggestionFacts",
    "SuggestionSignals",
    "SuggestionState",
    "Transition",
    "TrialFacts",
    "TrialSignals",
    "TrialState",
]
