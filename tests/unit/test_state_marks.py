"""A snapshot's marks (``marks.py``): written with every snapshot, of every assignment it holds;
optional when read, so that a snapshot written before them is resumed (its lookups searched
whole) and given them by its next compaction; and marks that are not marks are a corrupt
state, rebuilt from the history, never a crash nor a name or point issued twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer, encoded, marks
from katib_resume.adapters.local.suggestion.state_store import JOURNAL_NAME, StateStore
from tests.support.old_snapshots import write_snapshot
from tests.unit.test_nonfinite_values import experiment
from tests.unit.test_state_format_4 import _run


def _document(volume: Path) -> Any:
    return json.loads((volume / FILE_NAME).read_text())


def _rewritten(volume: Path, change: Any) -> None:
    """The volume's whole state as its lone snapshot, its payload changed by ``change`` (the
    digest computed here), its journal removed."""
    saved = StateStore(volume / FILE_NAME).load()
    payload = {
        "experiment": saved.experiment,
        "algorithm": saved.algorithm,
        "seed": saved.seed,
        "space": saved.space,
        "cursor": json.loads(encoded.canonical(saved.cursor)),
        "issued": list(saved.issued),
        "marks": marks.covering(encoded.canonical(list(saved.issued))[1:-1], None).field(),
    }
    change(payload)
    write_snapshot(volume / FILE_NAME, payload, 7, end="\n")
    (volume / JOURNAL_NAME).unlink(missing_ok=True)


@pytest.mark.parametrize("algorithm", ["sobol", "cmaes", "random"])
def test_a_snapshot_holds_the_marks_of_its_assignments(tmp_path: Path, algorithm: str) -> None:
    server = SuggestionServer(experiment(algorithm), 3, tmp_path)
    server.start([])
    held = _run(server, [], 9)
    saver = StateStore(tmp_path / FILE_NAME, records=1)
    state = saver.load(held)
    saver.save(state)  # (a compaction: the journal held records)
    payload = _document(tmp_path)["payload"]
    assert payload["issued"] == held
    expected = marks.covering(encoded.canonical(held)[1:-1], None)
    assert payload["marks"] == expected.field()
    assert len(payload["marks"]["names"]) == marks.WIDTH * len(held)


@pytest.mark.parametrize("algorithm", ["sobol", "tpe", "random"])
def test_a_snapshot_without_marks_resumes_and_its_next_compaction_writes_them(
    tmp_path: Path, algorithm: str
) -> None:
    subject = experiment(algorithm)
    uninterrupted = SuggestionServer(subject, 3, None)
    uninterrupted.start([])
    whole = _run(uninterrupted, [], 24)
    grown = SuggestionServer(subject, 3, tmp_path)
    grown.start([])
    held = _run(grown, [], 12)
    _rewritten(tmp_path, lambda payload: payload.pop("marks"))
    assert "marks" not in _document(tmp_path)["payload"]
    restarted = SuggestionServer(subject, 3, tmp_path)
    report = restarted.start(held)
    assert report.source == "restored", report.reason
    held = _run(restarted, held, 18)
    assert held == whole[:18]
    saver = StateStore(tmp_path / FILE_NAME, records=1)
    saver.save(saver.load(held))  # the next compaction
    assert _document(tmp_path)["payload"]["marks"] == (
        marks.covering(encoded.canonical(held)[1:-1], None).field()
    )
    again = SuggestionServer(subject, 3, tmp_path)
    assert again.start(held).source == "restored"
    assert _run(again, held, 24) == whole


def _truncated(payload: Any) -> None:
    payload["marks"]["names"] = payload["marks"]["names"][: -marks.WIDTH]


def _texts_of_other_kinds(payload: Any) -> None:
    payload["marks"] = {"names": 1, "points": 2}


def _no_points(payload: Any) -> None:
    del payload["marks"]["points"]


@pytest.mark.parametrize("change", [_truncated, _texts_of_other_kinds, _no_points])
def test_marks_that_are_not_marks_are_a_corrupt_state(tmp_path: Path, change: Any) -> None:
    subject = experiment("sobol")
    grown = SuggestionServer(subject, 3, tmp_path)
    grown.start([])
    held = _run(grown, [], 6)
    _rewritten(tmp_path, change)
    restarted = SuggestionServer(subject, 3, tmp_path)
    report = restarted.start(held)
    assert report.source == "rebuilt", report.reason
    assert "corrupt" in report.reason
    fresh = restarted.get_suggestions(held, 8, {})
    assert len(fresh) == 2
    assert {item["name"] for item in fresh}.isdisjoint(item["name"] for item in held)
