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

from collections.abc import Sequence
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.fake import chained
from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.fake.codec import encode
from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer
from katib_resume.adapters.local.suggestion import state_store as store
from katib_resume.adapters.local.suggestion.algorithms import build
from katib_resume.adapters.local.suggestion.assignments import Index
from katib_resume.adapters.local.suggestion.column import UNTOLD_TEXT
from katib_resume.adapters.local.suggestion.live_study import WITHHELD
from katib_resume.adapters.local.suggestion.optuna_search import OptunaSearch
from katib_resume.adapters.local.suggestion.points import Seen
from katib_resume.core.model import Experiment, Manifest
from tests.property.test_suggestion_determinism import (
    Steps,
    check_sound,
    follow,
    model_experiments,
    objective,
    seeds,
)

long_steps = st.lists(st.tuples(st.integers(2, 6), st.integers(0, 3)), min_size=10, max_size=16)
"""Controller steps (batch size, still running after it): 20 to 96 assignments."""


@pytest.mark.parametrize("algorithm", ["cmaes", "sobol"])
@settings(deadline=None, max_examples=12)
@given(seed=seeds, steps=long_steps, stored=st.booleans(), data=st.data())
def test_restarted_after_generations_it_continues_exactly(
    *, algorithm: str, seed: int, steps: Steps, stored: bool, data: st.DataObject
) -> None:
    """Handed the history as a list, or as the embedded runtime's store holds it (``stored``:
    its texts, decoded when read), when the restart decodes only the items of the trials it
    builds and the newest few (``MIN_RANGE``, made small here so that these histories have
    items further back)."""
    subject = data.draw(model_experiments(algorithm), label="subject")
    cuts = st.lists(st.integers(5, len(steps) - 1), min_size=1, max_size=3, unique=True)
    ends = [*sorted(data.draw(cuts, label="cuts")), len(steps)]
    reference = SuggestionServer(subject, seed, None)
    reference.start([])
    expected = follow(reference, [], steps)
    held: list[Manifest] = []
    with TemporaryDirectory() as directory, mock.patch.object(chained, "MIN_RANGE", NEWEST):
        volume = Path(directory)
        for begin, end in zip([0, *ends], ends, strict=False):
            if held:  # (before the restart: its read of the state is the latest kept)
                check_withheld(subject, seed, volume / FILE_NAME)
            server = SuggestionServer(subject, seed, volume)
            history = _stored(held) if stored else held
            report = server.start(history)
            assert report.source == ("restored" if held else "new"), report.reason
            held = _first_step(server, held, history, steps[begin])
            if isinstance(history, Chained) and history:
                check_decoded(server, history)
            held = follow(server, held, steps[begin + 1 : end])
            server.stop()
    assert held == expected
    check_sound(subject, held)


NEWEST = 4
"""``chained.MIN_RANGE`` in the test: the newest items a read near the end decodes at once."""


def _stored(items: list[Manifest]) -> Chained:
    """``items`` as a writer's store holds them: their texts, decoded when read."""
    return Chained.of(Texts([encode(item) for item in items]), len(items))


def _first_step(
    server: SuggestionServer, held: list[Manifest], history: Sequence[Manifest], step: Any
) -> list[Manifest]:
    """``follow``'s first step, the server handed ``history`` (``held``, perhaps as texts)."""
    size, running = step
    results = {a["name"]: objective(a) for a in held[: max(0, len(held) - running)]}
    return held + server.get_suggestions(history, len(held) + size, results)


def check_decoded(server: SuggestionServer, history: Chained) -> None:
    """Of ``history``, the restart and its first call decoded only the items of the trials
    its rebuild built (read one at a time, each far one alone) and the newest ``NEWEST``,
    unless an ask repeated a point of a finite space (which reads the set of every point
    issued to know whether any is left: ``Seen``)."""
    search = server._search
    assert isinstance(search, OptunaSearch) and search._live is not None
    live, count = search._live, len(history)
    if isinstance(live.seen, Seen) and live.seen.built:
        return
    trials = live.storage.get_all_trials(live.study_id, deepcopy=False)
    built = {
        i for i, n in enumerate(live.numbers[:count]) if n is not None and trials[n] is not WITHHELD
    }
    texts = history._texts
    assert set(texts._alone) <= built and texts._read[0] >= count - NEWEST


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
