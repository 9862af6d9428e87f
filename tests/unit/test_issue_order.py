"""The request's Trials in issue order: by our names when all are ours, else as given."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.app.suggestion.issue_order import in_issue_order
from katib_resume.core.model import Experiment

X = {"name": "x", "parameterType": "double", "feasibleSpace": {"min": "0", "max": "1"}}


def experiment(settings: list[dict[str, str]]) -> Experiment:
    spec = {"algorithm": {"algorithmName": "random", "algorithmSettings": settings}}
    return Experiment.model_validate(
        {"metadata": {"name": "e", "namespace": "ns"}, "spec": {**spec, "parameters": [X]}}
    )


@given(
    seed=st.integers(0, 2**32),
    state=st.sampled_from([[], [{"name": "random_state", "value": "7"}]]),
    count=st.integers(0, 30),
    gap=st.integers(0, 3),
    shuffle=st.randoms(),
)
def test_our_names_give_the_issue_order(
    seed: int, state: list[dict[str, str]], count: int, gap: int, shuffle: random.Random
) -> None:
    """Whatever order they come in, and with a few assignments that never became Trials."""
    subject = experiment(state)
    server = SuggestionServer(subject, seed, None)
    server.start([])
    issued = server.get_suggestions([], count)
    kept = [item for i, item in enumerate(issued) if gap == 0 or i % (gap + 3) != 1]
    given_order = list(kept)
    shuffle.shuffle(given_order)
    assert in_issue_order(given_order, subject, seed) == kept


def test_a_history_with_a_name_not_ours_keeps_its_order() -> None:
    subject = experiment([])
    server = SuggestionServer(subject, 3, None)
    server.start([])
    issued = server.get_suggestions([], 4)
    foreign = [issued[2], {"name": "e-zzzzzzzz", "parameterAssignments": []}, issued[0]]
    assert in_issue_order(foreign, subject, 3) == foreign
    assert in_issue_order(issued[::-1], subject, 4) == issued[::-1]  # another seed's names
