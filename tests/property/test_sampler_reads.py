"""CMA-ES and Sobol, restarted after several generations, continue exactly from a partial study.

A restart builds only the trials its sampler reads (``sampler_reads``): for CMA-ES the complete
trials of the current generation or later, for Sobol none but the running ones and the best,
each other trial a ``WITHHELD`` place. Had a row left out a trial that an ask reads, now or
after later results, the resumed asks would differ from the uninterrupted run's. So: runs long
enough for several CMA-ES generations, with Trials still running and some failing, restarted
from their volume at one to three points, hand out exactly the uninterrupted run's assignments,
and each restart withheld trials once there were any it could withhold.
"""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer
from katib_resume.adapters.local.suggestion import state_store as store
from katib_resume.adapters.local.suggestion.algorithms import build
from katib_resume.adapters.local.suggestion.assignments import Index
from katib_resume.adapters.local.suggestion.live_study import WITHHELD
from katib_resume.adapters.local.suggestion.optuna_search import OptunaSearch
from katib_resume.adapters.local.suggestion.told_column import UNTOLD_TEXT
from katib_resume.core.model import Experiment, Manifest
from tests.property.test_suggestion_determinism import (
    Steps,
    check_sound,
    follow,
    model_experiments,
    seeds,
)

long_steps = st.lists(st.tuples(st.integers(2, 6), st.integers(0, 3)), min_size=10, max_size=16)
"""Controller steps (batch size, still running after it): 20 to 96 assignments."""


@pytest.mark.parametrize("algorithm", ["cmaes", "sobol"])
@settings(deadline=None, max_examples=12)
@given(seed=seeds, steps=long_steps, data=st.data())
def test_restarted_after_generations_it_continues_exactly(
    *, algorithm: str, seed: int, steps: Steps, data: st.DataObject
) -> None:
    subject = data.draw(model_experiments(algorithm), label="subject")
    cuts = st.lists(st.integers(5, len(steps) - 1), min_size=1, max_size=3, unique=True)
    ends = [*sorted(data.draw(cuts, label="cuts")), len(steps)]
    reference = SuggestionServer(subject, seed, None)
    reference.start([])
    expected = follow(reference, [], steps)
    held: list[Manifest] = []
    with TemporaryDirectory() as directory:
        volume = Path(directory)
        for begin, end in zip([0, *ends], ends, strict=False):
            server = SuggestionServer(subject, seed, volume)
            report = server.start(held)
            assert report.source == ("restored" if held else "new"), report.reason
            if held:
                check_withheld(subject, seed, volume / FILE_NAME)
            held = follow(server, held, steps[begin:end])
            server.stop()
    assert held == expected
    check_sound(subject, held)


def check_withheld(subject: Experiment, seed: int, path: Path) -> None:
    """The study a restart builds from ``path`` withholds a trial whenever one could be: for
    Sobol every finished trial but the best; for CMA-ES the complete trials of the
    generations before the one the newest complete trial's optimizer had reached."""
    state = store.load(path)
    search = build(subject, seed)
    assert isinstance(search, OptunaSearch)
    live = search._rebuild(state.cursor, tuple(Index.of(state.issued).points))
    trials = live.storage.get_all_trials(live.study_id, deepcopy=False)
    withheld = sum(t is WITHHELD for t in trials)
    told = [v for v in state.cursor["told"] if v != UNTOLD_TEXT]
    complete = sum(v is not None for v in told)
    if search.name == "sobol":
        assert withheld == len(told) - (complete > 0)
    elif older_generation_complete(state.cursor):
        assert withheld > 0


def older_generation_complete(cursor: dict[str, Any]) -> bool:
    """Whether a complete trial's generation is below that of the newest complete trial
    carrying an optimizer (which a restart can then withhold)."""
    told, attrs = cursor["told"], cursor["trial_attrs"]
    complete = [i for i, v in enumerate(told) if v not in (None, UNTOLD_TEXT) and str(i) in attrs]
    carriers = [i for i in complete if "cma:optimizer:0" in attrs[str(i)]]
    if not carriers:
        return False
    current = attrs[str(carriers[-1])]["cma:generation"]
    return any(attrs[str(i)].get("cma:generation", current) < current for i in complete)
