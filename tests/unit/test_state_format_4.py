"""State format 4: an Optuna search's results told are a column, and a volume of format 3 (a dict
by index text, in the snapshot and in its journal's records, written here as documented) is
resumed, continues the uninterrupted run, and is upgraded by its next save (to the newest
format, where the column is packed doubles). A call's results set entries of the column in the
journal (``set``), not the whole column."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer, state
from katib_resume.adapters.local.suggestion.column import PACKED, UNTOLD_TEXT, Column
from katib_resume.adapters.local.suggestion.state_store import JOURNAL_NAME, StateStore
from tests.support.old_snapshots import write_snapshot, write_volume
from tests.unit.test_nonfinite_values import experiment


def _value(item: dict[str, Any]) -> float:
    return sum(float(v["value"]) for v in item["parameterAssignments"]) % 1.7


def _run(server: SuggestionServer, held: list[Any], total: int) -> list[Any]:
    """Three assignments a call up to ``total``, each call told the results of those before
    but the newest one (still running)."""
    while len(held) < total:
        results = {item["name"]: _value(item) for item in held[:-1]}
        held = held + server.get_suggestions(held, min(total, len(held) + 3), results)
    return held


def _version_3(cursor: dict[str, Any]) -> dict[str, Any]:
    """``cursor`` as format 3 kept it: the results told by index text."""
    told = {str(i): v for i, v in enumerate(cursor["told"].entries()) if v != UNTOLD_TEXT}
    return {**cursor, "told": told}


def _write_version_3(directory: Path, older: Any, newer: Any) -> None:
    """A format 3 volume: the snapshot of ``older`` and a journal record taking it to
    ``newer``, their cursors as format 3 kept them."""
    change = write_volume(directory, older, newer, 3, _version_3)
    assert "merge" in change["keys"]["told"]  # format 3's change of the dict


@pytest.mark.parametrize("algorithm", ["sobol", "tpe", "cmaes"])
def test_a_format_3_volume_is_resumed_and_upgraded_by_the_next_save(
    tmp_path: Path, algorithm: str
) -> None:
    resume_an_old_volume(tmp_path, algorithm, _write_version_3)


def resume_an_old_volume(
    tmp_path: Path, algorithm: str, write: Callable[[Path, Any, Any], None]
) -> None:
    """A volume grown to 18 and then 21 assignments, written by ``write`` as an earlier format
    from the states after each (older, newer), is resumed, continues the uninterrupted run, and
    is written anew by its next save, the results column packed."""
    subject = experiment(algorithm)
    uninterrupted = SuggestionServer(subject, 3, None)
    uninterrupted.start([])
    whole = _run(uninterrupted, [], 27)
    grown = SuggestionServer(subject, 3, tmp_path / "grown")
    grown.start([])
    held = _run(grown, [], 18)
    older = StateStore(tmp_path / "grown" / FILE_NAME).load()
    held = _run(grown, held, 21)
    newer = StateStore(tmp_path / "grown" / FILE_NAME).load()
    assert held == whole[:21]
    volume = tmp_path / "volume"
    volume.mkdir()
    write(volume, older, newer)
    restarted = SuggestionServer(subject, 3, volume)
    report = restarted.start(json.loads(json.dumps(held)))
    assert report.source == "restored", report.reason
    held = _run(restarted, held, 24)
    document = json.loads((volume / FILE_NAME).read_text())
    assert document["version"] == state.VERSION  # written anew by the save
    assert set(document["payload"]["cursor"]["told"]) == {PACKED}
    again = SuggestionServer(subject, 3, volume)
    assert again.start(json.loads(json.dumps(held))).source == "restored"
    assert _run(again, held, 27) == whole


def test_a_format_3_cursor_that_is_no_search_position_is_rebuilt(tmp_path: Path) -> None:
    """A format 3 ``told`` that is not a dict cannot be upgraded: the state is rebuilt."""
    subject = experiment("sobol")
    grown = SuggestionServer(subject, 3, tmp_path / "grown")
    grown.start([])
    held = _run(grown, [], 6)
    saved = StateStore(tmp_path / "grown" / FILE_NAME).load()
    broken = type(saved)(**{**_fields(saved), "cursor": {**saved.cursor, "told": [1.0]}})
    volume = tmp_path / "volume"
    volume.mkdir()
    _write_version_3_snapshot(volume, broken)
    report = SuggestionServer(subject, 3, volume).start(held)
    assert report.source == "rebuilt"
    assert "corrupt" in report.reason


def _fields(saved: Any) -> dict[str, Any]:
    names = ("experiment", "algorithm", "seed", "space", "cursor", "issued")
    return {name: getattr(saved, name) for name in names}


def _write_version_3_snapshot(directory: Path, saved: Any) -> None:
    payload = {**_fields(saved), "issued": list(saved.issued)}
    write_snapshot(directory / FILE_NAME, payload, 3)


def test_a_calls_results_set_entries_of_the_column_in_the_journal(tmp_path: Path) -> None:
    """Results told out of order fill the column's untold entries: the record sets them."""
    subject = experiment("sobol")
    server = SuggestionServer(subject, 3, tmp_path)
    server.start([])
    held = server.get_suggestions([], 12)
    first = {item["name"]: 0.5 for item in held[:10]}
    held += server.get_suggestions(held, 13, first)
    later = {**first, held[11]["name"]: 0.25}  # 10 still running, 11 told
    held += server.get_suggestions(held, 14, later)
    done = {**later, held[10]["name"]: 0.75}
    held += server.get_suggestions(held, 15, done)
    records = (tmp_path / JOURNAL_NAME).read_bytes().split(b"\n")[1:-1]
    changes = [json.loads(line.split(b" ", 2)[2].split(b"\t")[0]) for line in records]
    told_changes = [c["keys"]["told"] for c in changes if "told" in c["keys"]]
    assert told_changes[-2] == {"extend": [UNTOLD_TEXT, 0.25]}
    assert told_changes[-1] == {"set": [[10, 0.75]], "extend": []}
    told = StateStore(tmp_path / FILE_NAME).load().cursor["told"]
    assert told == Column.of([0.5] * 10 + [0.75, 0.25])
    restarted = SuggestionServer(subject, 3, tmp_path)
    assert restarted.start(held).source == "restored"
