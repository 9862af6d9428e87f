"""A restarted suggestion server parses only the saved assignments the history does not hold.

The bytes it leaves unparsed are still checksummed: damage there is a rebuild with the reason
said, as before. A volume laid out as the earlier versions wrote it (a version 2 snapshot, a
version 1 journal: written here by hand, byte by byte, not by the current writer) is resumed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import xxhash

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer, state_store
from katib_resume.adapters.local.suggestion.assignments import assignment
from katib_resume.adapters.local.suggestion.state import VERSION
from katib_resume.adapters.local.suggestion.state_store import JOURNAL_NAME, StateStore
from katib_resume.adapters.local.suggestion.unparsed import Unparsed
from tests.support.old_snapshots import write_snapshot
from tests.unit.test_suggestion_journal import experiment, grow, started


def _copies(items: Any) -> Any:
    """The assignments as a controller holds them: parsed anew, equal but not ours."""
    return json.loads(json.dumps(items))


def test_a_restart_holds_the_histories_items_and_parses_only_those_after_it(
    tmp_path: Path,
) -> None:
    history = grow(started(tmp_path), 3)
    ahead = started(None).get_suggestions([], 33)  # the server saved 33; the controller holds 31
    held = _copies(history[:31])
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    assert restarted.start(held).source == "restored"
    issued = restarted.held(33)
    assert all(ours is theirs for ours, theirs in zip(issued[:31], held, strict=True))
    assert list(issued) == ahead  # the two after it parsed from the volume
    assert restarted.get_suggestions(held, 34) == started(None).get_suggestions([], 34)[31:]


def test_a_history_with_labels_is_compared_without_them(tmp_path: Path) -> None:
    """PBT's controller holds its items with their labels, the volume without: the history
    reduced to the saved keys is the saved bytes, so nothing saved is parsed but the rest."""
    history = grow(started(tmp_path), 2)
    labelled = [{**item, "labels": {"k": "v"}} for item in _copies(history)]
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    assert restarted.start(labelled[:31]).source == "restored"
    held = restarted.held(32)
    assert list(held) == history and all("labels" not in item for item in held)
    assert all(
        ours["parameterAssignments"] is theirs["parameterAssignments"]
        for ours, theirs in zip(held, labelled[:31], strict=False)
    )
    assert restarted.get_suggestions(labelled, 33) == started(None).get_suggestions([], 33)[32:]


def test_a_history_the_encoders_write_apart_is_compared_item_by_item(tmp_path: Path) -> None:
    """A value with a character ``canonical`` escapes and ``orjson`` does not: the history's
    bytes differ from the saved ones, so every saved item is parsed and compared."""
    server = started(tmp_path)
    history = server.get_suggestions([], 3)
    state = state_store.load(tmp_path / FILE_NAME)
    odd = (*history[:2], assignment(history[2]["name"], (("lr", "0.0é"),)))
    StateStore(tmp_path / FILE_NAME).save(replace(state, issued=odd))
    copies = _copies(odd)
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    assert restarted.start(copies).source == "restored"
    assert restarted.held(3) == odd
    assert all(ours is not theirs for ours, theirs in zip(restarted.held(3), copies, strict=True))


def test_damage_in_the_assignments_left_unparsed_is_a_rebuild(tmp_path: Path) -> None:
    history = grow(started(tmp_path), 0)  # a snapshot alone
    path = tmp_path / FILE_NAME
    content = bytearray(path.read_bytes())
    at = content.rfind(b'"value":"') + len(b'"value":"')  # a digit of the last value
    content[at] ^= 1
    path.write_bytes(bytes(content))
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    report = restarted.start(_copies(history))
    assert report.source == "rebuilt"
    assert "suggestion state corrupt" in report.reason
    assert list(restarted.held(30)) == history  # the controller's list, unchanged
    assert (tmp_path / (FILE_NAME + ".discarded")).read_bytes() == bytes(content)  # kept


def _line(text: str) -> str:
    return f"{text} {hashlib.sha256(text.encode()).hexdigest()}"


def test_a_volume_written_by_the_earlier_versions_is_resumed(tmp_path: Path) -> None:
    """The snapshot and the journal of version 2 / 1 as documented (``state.py``,
    ``journal.py``), built here from their documented layout rather than by the writer."""
    grow(started(tmp_path / "real"), 0)  # the search's own values: its space and cursors
    real = state_store.load(tmp_path / "real" / FILE_NAME)
    whole = started(None).get_suggestions([], 32)
    names = [item["name"] for item in whole]
    first, later = whole[:30], whole[30:]
    body = _write_version_2(tmp_path, real, first)
    header = _line(f"katib-resume/suggestion-journal 1 {hashlib.sha256(body).hexdigest()}")
    change = (
        json.dumps({"value": real.cursor + 2}) + "\t" + json.dumps(later, separators=(",", ":"))
    )
    chained = hashlib.sha256(hashlib.sha256(body).hexdigest().encode() + change.encode())
    record = f"{len(change.encode())} {chained.hexdigest()} {change}"
    (tmp_path / JOURNAL_NAME).write_text(f"{header}\n{record}\n")
    assert [item["name"] for item in state_store.load(tmp_path / FILE_NAME).issued] == names
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    assert restarted.start(_copies(first)).source == "restored"
    assert list(restarted.held(32)) == whole
    assert (
        restarted.get_suggestions(_copies(whole), 33) == started(None).get_suggestions([], 33)[32:]
    )
    upgraded = (tmp_path / JOURNAL_NAME).read_bytes()  # the save compacted: both upgraded
    assert upgraded.startswith(b"katib-resume/suggestion-journal 2 ") and upgraded.count(b"\n") == 1
    assert [item["name"] for item in state_store.load(tmp_path / FILE_NAME).issued] == [
        *names,
        started(None).get_suggestions([], 33)[32]["name"],
    ]


def test_a_journal_of_the_current_version_as_documented_is_resumed(tmp_path: Path) -> None:
    """Version 2's journal (``journal.py``): its header and records' XXH3-128 digests, each
    record's of the one before and its body, built here from the documented layout."""
    server = started(tmp_path)
    history = server.get_suggestions([], 30)  # a snapshot, and a journal of no records
    snapshot = state_store.load(tmp_path / FILE_NAME)
    whole = started(None).get_suggestions([], 33)
    base = (tmp_path / JOURNAL_NAME).read_bytes().split(b" ")[2].decode()
    line = f"katib-resume/suggestion-journal 2 {base}"
    lines, previous = [f"{line} {xxhash.xxh3_128_hexdigest(line.encode())}"], base
    for held, count in ((30, 31), (31, 33)):  # two saves: one assignment, then two
        change = json.dumps({"value": snapshot.cursor + count - 30}) + "\t"
        body = (change + json.dumps(whole[held:count], separators=(",", ":"))).encode()
        previous = xxhash.xxh3_128_hexdigest(previous.encode() + body)
        lines.append(f"{len(body)} {previous} {body.decode()}")
    (tmp_path / JOURNAL_NAME).write_text("\n".join(lines) + "\n")
    assert state_store.load(tmp_path / FILE_NAME).issued == tuple(whole)
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    assert restarted.start(_copies(history)).source == "restored"
    assert (
        restarted.get_suggestions(_copies(whole), 34) == started(None).get_suggestions([], 34)[33:]
    )
    assert (tmp_path / JOURNAL_NAME).read_bytes().count(b"\n") == 4  # appended to: current


def test_unparsed_items_resolve_only_at_an_items_boundary() -> None:
    items = [{"name": "a", "parameterAssignments": []}, {"name": "ab", "parameterAssignments": []}]
    saved = Unparsed(json.dumps(items, separators=(",", ":")).encode()[1:-1])
    cut = [{"name": "a", "parameterAssignments": []}]
    assert saved.resolve(cut)[0] is cut[0] and saved.resolve(cut) == tuple(items)
    assert saved.resolve([{"name": "ab", "parameterAssignments": []}]) == tuple(items)
    assert saved.resolve([]) == tuple(items)


def _version_2(tmp_path: Path) -> list[Any]:
    """A version 2 snapshot of 30 assignments; the uninterrupted run's first 33."""
    grow(started(tmp_path / "real"), 0)
    real = state_store.load(tmp_path / "real" / FILE_NAME)
    whole = started(None).get_suggestions([], 33)
    _write_version_2(tmp_path, real, whole[:30])
    return whole


def _write_version_2(directory: Path, real: Any, issued: list[Any]) -> bytes:
    """A version 2 snapshot of ``real``'s search holding ``issued``, as documented (its
    SHA-256 computed here, by hand); its payload's canonical bytes."""
    payload = {
        "experiment": "ns/exp",
        "algorithm": "random",
        "seed": real.seed,
        "space": real.space,
        "cursor": real.cursor,
        "issued": issued,
    }
    return write_snapshot(directory / FILE_NAME, payload, 2)


def test_a_version_2_snapshot_is_upgraded_by_the_next_save(tmp_path: Path) -> None:
    """Restored as it is; the first save writes a snapshot of the whole state in the current
    version (no journal record continuing the old one), which the next restart restores and
    continues."""
    whole = _version_2(tmp_path)
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    assert restarted.start(_copies(whole[:30])).source == "restored"
    assert restarted.get_suggestions(_copies(whole[:30]), 31) == whole[30:31]
    document = json.loads((tmp_path / FILE_NAME).read_text())
    assert document["version"] == VERSION and "sha256" not in document
    assert len(document["payload"]["issued"]) == 31
    assert (tmp_path / JOURNAL_NAME).read_bytes().count(b"\n") == 1  # a header, no record
    again = SuggestionServer(experiment(), 5, tmp_path)
    assert again.start(_copies(whole[:31])).source == "restored"
    assert again.get_suggestions(_copies(whole[:31]), 33) == whole[31:]


def test_a_damaged_version_2_snapshot_is_rebuilt(tmp_path: Path) -> None:
    """Its SHA-256 is still checked: a flipped value is found, the state rebuilt."""
    whole = _version_2(tmp_path)
    path = tmp_path / FILE_NAME
    path.write_bytes(path.read_bytes().replace(b'"seed":', b'"seed":1', 1))
    restarted = SuggestionServer(experiment(), 5, tmp_path)
    report = restarted.start(_copies(whole[:30]))
    assert report.source == "rebuilt"
    assert "checksum mismatch" in report.reason
    assert restarted.get_suggestions(_copies(whole[:30]), 33) == whole[30:]
