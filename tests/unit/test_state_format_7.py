"""State format 7: an Optuna search's results told are a column of doubles, packed on the volume
(``column.py``). A volume of format 6 (the column a JSON list, in the snapshot and in its
journal's record, written here as that format held them) is resumed, continues the
uninterrupted run, and is upgraded by its next save; a packed column that does not read as one
(not base64, not whole doubles, a NaN that is no entry) is a corrupt state, rebuilt from the
history, never a crash nor a resumed search of wrong results."""

from __future__ import annotations

import base64
import struct
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer
from katib_resume.adapters.local.suggestion.column import PACKED, Column
from katib_resume.adapters.local.suggestion.state_store import StateStore
from tests.support.old_snapshots import write_snapshot, write_volume
from tests.unit.test_nonfinite_values import experiment
from tests.unit.test_state_format_4 import _run, resume_an_old_volume


def _version_6(cursor: dict[str, Any]) -> dict[str, Any]:
    """``cursor`` as format 6 kept it: the results told a JSON list."""
    return {**cursor, "told": cursor["told"].entries()}


def _write_version_6(directory: Path, older: Any, newer: Any) -> None:
    """A format 6 volume: the snapshot of ``older`` and a journal record taking it to
    ``newer``, the column a list in both."""
    change = write_volume(directory, older, newer, 6, _version_6)
    assert set(change["keys"]["told"]) <= {"set", "extend"}  # the list's entries changed


@pytest.mark.parametrize("algorithm", ["sobol", "tpe", "cmaes"])
def test_a_format_6_volume_is_resumed_and_upgraded_by_the_next_save(
    tmp_path: Path, algorithm: str
) -> None:
    resume_an_old_volume(tmp_path, algorithm, _written_as_version_6)


def _written_as_version_6(volume: Path, older: Any, newer: Any) -> None:
    """``_write_version_6``, read back as written: format 6, the column a list."""
    _write_version_6(volume, older, newer)
    read = StateStore(volume / FILE_NAME)
    assert read.load().cursor["told"] == newer.cursor["told"].entries()
    assert read.version == 6


def _bits(value: int) -> str:
    return base64.b64encode(struct.pack("<dQ", 1.5, value)).decode()


@pytest.mark.parametrize(
    "packed",
    [
        "not base64!",
        base64.b64encode(b"\x00" * 12).decode(),  # a double and a half
        _bits(0x7FF8_0000_0000_0000),  # a NaN that is neither a failure nor untold
        _bits(0x7FF0_0000_0000_0001),  # a signalling NaN
    ],
)
def test_a_packed_column_that_is_no_column_is_a_corrupt_state(tmp_path: Path, packed: str) -> None:
    subject = experiment("sobol")
    grown = SuggestionServer(subject, 3, tmp_path / "grown")
    grown.start([])
    held = _run(grown, [], 6)
    saved = StateStore(tmp_path / "grown" / FILE_NAME).load()
    names = ("experiment", "algorithm", "seed", "space")
    payload = {name: getattr(saved, name) for name in names}
    cursor = {**saved.cursor, "told": {PACKED: packed}}
    volume = tmp_path / "volume"
    volume.mkdir()
    write_snapshot(volume / FILE_NAME, {**payload, "cursor": cursor, "issued": held}, 7)
    restarted = SuggestionServer(subject, 3, volume)
    report = restarted.start(held)
    assert report.source == "rebuilt", report.reason
    assert "corrupt" in report.reason
    assert len(restarted.get_suggestions(held, 8, {})) == 2  # and it goes on


def test_the_column_keeps_every_bit_of_every_entry() -> None:
    """Packed and read back, each entry is the very double: the sign of zero, the
    infinities, the two NaNs that mean a failure and no result, a subnormal."""
    entries: list[Any] = [0.0, -0.0, "inf", "-inf", None, "untold", 5e-324, 1.5, 7]
    column = Column.of(entries)
    read = Column.unpacked(column.packed()[PACKED])
    assert read == column
    assert [struct.pack("<d", v) for v in read.doubles] == [
        struct.pack("<d", v) for v in column.doubles
    ]
    assert read.entries() == [0.0, -0.0, "inf", "-inf", None, "untold", 5e-324, 1.5, 7.0]
    assert repr(read.entries()[1]) == "-0.0"
    assert Column.of([0.0]) != Column.of([-0.0])


@pytest.mark.parametrize("entry", [float("nan"), True, "nan", [1.0], 10**400])
def test_an_entry_that_no_result_is_is_refused(entry: Any) -> None:
    with pytest.raises(ValueError):
        Column.of([entry])


@pytest.mark.parametrize(
    ("pairs", "extend"),
    [
        ([[3, 1.0]], []),  # a place the column has not
        ([[-1, 1.0]], []),
        ([[0, 1.0, 2.0]], []),
        ([(0, 1.0)], []),
        ([[True, 1.0]], []),  # (an index that is a bool)
        ([[0, True]], []),
        ([[0, 1.0], [1, float("nan")]], []),
        ([[0, 10**400]], []),
        ([], [1.0, "nan"]),
        ([], "untold"),
    ],
)
def test_a_change_that_does_not_apply_changes_nothing(pairs: Any, extend: Any) -> None:
    """A journal record's change of a column is refused whole, before any entry is set."""
    column = Column.of([1.0, None, "untold"])
    with pytest.raises(ValueError):
        column.set(pairs, extend)
    assert column == Column.of([1.0, None, "untold"])


def test_a_change_sets_its_entries_and_adds_its_own() -> None:
    column = Column.of([1.0, None, "untold"])
    column.set([[2, -0.0], [0, "inf"]], [7, None, "untold", "-inf"])
    assert column.entries() == ["inf", None, -0.0, 7.0, None, "untold", "-inf"]
    assert repr(column[2]) == "-0.0"


@pytest.mark.parametrize("entries", [[1.0, "nan"], "untold", [float("nan")], (1.0,)])
def test_entries_added_that_are_none_add_nothing(entries: Any) -> None:
    column = Column.of([1.0])
    with pytest.raises(ValueError):
        column.extend(entries)
    assert column == Column.of([1.0])
