"""State format 5: a grid's cursor is a position in the seed's order of its cells. A format 4
grid volume (its cursor a position in the product's own order, its cells issued in that order,
written here as that format held them) is resumed: every cell not issued yet is issued once,
none twice, the grid is then exhausted, and the next save writes format 5."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer, state
from tests.support.old_snapshots import write_snapshot
from tests.unit.test_suggestion_service import grid, param

SUBJECT = grid(param("a", "int", min="1", max="4"), param("b", "int", min="1", max="4"))
CELLS = [(str(a), str(b)) for a, b in itertools.product(range(1, 5), repeat=2)]


def _cells(items: list[Any]) -> list[tuple[str, ...]]:
    return [tuple(v["value"] for v in item["parameterAssignments"]) for item in items]


def _write_version_4(directory: Path, issued: int) -> list[Any]:
    """A format 4 volume that issued the product's first ``issued`` cells, in order; its items
    (named as the server names them) are returned, the history the controller holds."""
    server = SuggestionServer(SUBJECT, 3, directory)
    server.start([])
    items = server.get_suggestions([], issued)
    payload = json.loads((directory / FILE_NAME).read_text())["payload"]
    del payload["marks"]  # (of the items as written, which format 4 did not hold)
    for item, (a, b) in zip(items, CELLS, strict=False):
        item["parameterAssignments"] = [{"name": "a", "value": a}, {"name": "b", "value": b}]
    write_snapshot(directory / FILE_NAME, {**payload, "cursor": issued, "issued": items}, 4)
    return items


def test_a_format_4_grid_is_resumed_without_a_cell_lost_or_repeated(tmp_path: Path) -> None:
    history = _write_version_4(tmp_path, 6)
    assert _cells(history) == CELLS[:6]
    server = SuggestionServer(SUBJECT, 3, tmp_path)
    report = server.start(json.loads(json.dumps(history)))
    assert report.source == "restored", report.reason
    rest = server.get_suggestions(history, 16)
    assert len(rest) == 10
    assert sorted(_cells(history + rest)) == CELLS  # each cell once
    assert json.loads((tmp_path / FILE_NAME).read_text())["version"] == state.VERSION  # upgraded
    assert server.get_suggestions(history + rest, 17) == []
    assert server.exhausted(17)
