"""A CMA-ES search's volume keeps only the optimizers a later ask may restore.

After every call, the saved cursor holds an optimizer for the newest complete trial carrying
one and for the trials asked after it, and a tombstone (an empty first piece) for every older
carrier, and no entry before the newest carrier of a lower generation than the newest complete
carrier's: so the state grows by the generations in flight, not by an optimizer a trial; and a run
restarted from that volume hands out the uninterrupted run's assignments (as in
``test_sampler_reads.py``, whose restarts read the tombstones too). A state of format 5, every
optimizer kept, is pruned as it is read: the resumed run hands out the uninterrupted run's
assignments, and its first save writes format 6.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer
from katib_resume.adapters.local.suggestion import state as snapshot
from katib_resume.adapters.local.suggestion import state_store as store
from katib_resume.adapters.local.suggestion.cma_optimizers import Pickled
from katib_resume.adapters.local.suggestion.column import UNTOLD_TEXT
from katib_resume.core.model import Experiment
from tests.property.test_sampler_reads import long_steps
from tests.property.test_suggestion_determinism import (
    Steps,
    follow,
    model_experiments,
    seeds,
)
from tests.support.old_snapshots import write_state

PIECE, GENERATION = "cma:optimizer:0", "cma:generation"


def check_pruned(cursor: dict[str, Any], whole: dict[str, Any] | None = None) -> None:
    """The cursor's optimizers are those of the newest complete carrier and of the carriers
    asked after it; every older carrier's is a tombstone; and, given the entries of a run that
    dropped none (``whole``), its entries are those from the newest carrier of a lower
    generation than that one's, where a rebuild's scan stops, on."""
    told, attrs = cursor["told"], cursor["trial_attrs"]
    carrying = sorted(int(i) for i, a in attrs.items() if a.get(PIECE))
    tombs = sorted(int(i) for i, a in attrs.items() if a.get(PIECE) == "")
    complete = [i for i in sorted([*carrying, *tombs]) if i < len(told) and _told(told[i])]
    if not complete:
        assert not tombs
    else:
        newest = complete[-1]
        assert newest in carrying
        assert all(i < newest for i in tombs)
        assert all(i >= newest for i in carrying)
    if whole is not None:
        stop = _stop(told, whole)
        assert _shape(attrs) == _shape({i: a for i, a in whole.items() if int(i) >= stop})


def _shape(attrs: dict[str, Any]) -> dict[str, tuple[Any, bool, bool]]:
    """Each entry's generation, and whether it holds an optimizer, or a tombstone (the bytes of
    an optimizer restored after a restart need not be the uninterrupted run's: a rebuilt trial's
    params are read back from the assignment's text)."""
    return {
        i: (a.get(GENERATION), bool(a.get(PIECE)), a.get(PIECE) == "") for i, a in attrs.items()
    }


def _stop(told: list[Any], attrs: dict[str, Any]) -> int:
    """The newest carrier of a lower generation than the newest complete carrier's (0: none)."""
    carriers = sorted(int(i) for i, a in attrs.items() if PIECE in a)
    complete = [i for i in carriers if i < len(told) and _told(told[i]) and attrs[str(i)][PIECE]]
    if not complete:
        return 0
    floor = attrs[str(complete[-1])][GENERATION]
    lower = [i for i in carriers if attrs[str(i)][GENERATION] < floor]
    return lower[-1] if lower else 0


def _told(entry: Any) -> bool:
    return entry is not None and entry != UNTOLD_TEXT


@settings(deadline=None, max_examples=10)
@given(seed=seeds, steps=long_steps, data=st.data())
def test_the_volume_keeps_only_the_optimizers_an_ask_may_restore(
    *, seed: int, steps: Steps, data: st.DataObject
) -> None:
    """Restarted from the volume at drawn steps, too (a restart finds the optimizers its cursor
    keeps, and prunes them as the uninterrupted server does). The oracle is an uninterrupted run
    that drops no entry."""
    subject = data.draw(model_experiments("cmaes"), label="subject")
    cuts = data.draw(st.sets(st.integers(1, len(steps) - 1), max_size=3), label="cuts")
    wholes: list[dict[str, Any]] = []
    with mock.patch.object(Pickled, "start", _first):
        reference = SuggestionServer(subject, seed, None)
        reference.start([])
        expected: list[Any] = []
        for step in steps:
            expected = follow(reference, expected, [step])
            wholes.append(reference._state.cursor["trial_attrs"])  # type: ignore[union-attr]
    with TemporaryDirectory() as directory:
        held: list[Any] = []
        server = SuggestionServer(subject, seed, Path(directory))
        server.start([])
        for number, step in enumerate(steps):
            if number in cuts:
                server.stop()
                server = SuggestionServer(subject, seed, Path(directory))
                assert server.start(held).source == "restored"
            held = follow(server, held, [step])
            check_pruned(store.load(Path(directory) / FILE_NAME).cursor, wholes[number])
    assert held == expected


def test_a_format_5_state_is_pruned_as_it_is_read_and_goes_on_exactly(tmp_path: Path) -> None:
    subject = _subject()
    steps = [(6, 0)] * 12 + [(6, 2)] * 3
    reference = SuggestionServer(subject, 7, None)
    reference.start([])
    expected = follow(reference, [], steps)
    dead, start = (
        mock.patch.object(Pickled, "dead", _none),
        mock.patch.object(Pickled, "start", _first),
    )
    with dead, start:  # as format 5 kept them: every entry, every optimizer
        server = SuggestionServer(subject, 7, tmp_path)
        server.start([])
        held = follow(server, [], steps[:10])
        server.stop()
    path = tmp_path / FILE_NAME
    write_state(path, store.load(path), 5)
    old = store.StateStore(path)
    cursor = old.load().cursor
    assert old.version == 5
    assert sum(bool(a.get(PIECE)) for a in cursor["trial_attrs"].values()) > 12  # all kept
    with pytest.raises(AssertionError):
        check_pruned(cursor)
    restarted = SuggestionServer(subject, 7, tmp_path)
    assert restarted.start(held).source == "restored"
    held = follow(restarted, held, steps[10:])
    assert held == expected
    new = store.StateStore(tmp_path / FILE_NAME)
    check_pruned(new.load().cursor)
    assert new.version == snapshot.VERSION == 7


def _none(_: Pickled, __: int) -> list[int]:
    return []


def _first(pickled: Pickled, _: int) -> int:
    return pickled.first


def _subject() -> Experiment:
    space = {"parameterType": "double", "feasibleSpace": {"min": "-2", "max": "3"}}
    return Experiment.model_validate(
        {
            "metadata": {"name": "cma", "namespace": "default"},
            "spec": {
                "algorithm": {"algorithmName": "cmaes"},
                "objective": {"type": "minimize", "objectiveMetricName": "f"},
                "parameters": [{"name": "x", **space}, {"name": "y", **space}],
            },
        }
    )


@pytest.mark.parametrize("attrs", [{"x": {}}, {"3": 5}, []])
def test_a_cursor_whose_attributes_are_not_by_index_is_rebuilt_not_read(
    tmp_path: Path, attrs: Any
) -> None:
    """Checksummed and all (a hand's edit, or a bug's): the search refuses it at the restore."""
    subject = _subject()
    server = SuggestionServer(subject, 7, tmp_path)
    server.start([])
    held = follow(server, [], [(6, 0)] * 3)
    saved = store.load(tmp_path / FILE_NAME)
    bad = replace(saved, cursor={**saved.cursor, "trial_attrs": attrs})
    (tmp_path / store.JOURNAL_NAME).unlink(missing_ok=True)
    (tmp_path / FILE_NAME).write_bytes(snapshot.encode(bad))
    report = SuggestionServer(subject, 7, tmp_path).start(held)
    assert report.source == "rebuilt"
    assert report.reason.startswith("suggestion state corrupt (not an cmaes search position)")
