"""A suggestion-state snapshot of an earlier version, written as ``docs/algorithms.md``
describes it: the payload's canonical JSON and its digest computed here, by hand, not by the
code under test (which must read what that version wrote); and a volume of one, its journal's
record framed as every version's is (``journal.frame``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import xxhash

from katib_resume.adapters.local.suggestion import journal, state
from katib_resume.adapters.local.suggestion.cursor_delta import diff
from katib_resume.adapters.local.suggestion.state_store import JOURNAL_NAME

FORMAT = "katib-resume/suggestion-state"


def write_snapshot(path: Path, payload: dict[str, Any], version: int, end: str = "") -> bytes:
    """The snapshot of ``payload`` in ``version`` at ``path`` (``end`` after the document: the
    newline the layout of a volume with a journal has); the payload's canonical bytes."""
    body = canonical(payload)
    key, digest = (
        ("sha256", hashlib.sha256(body).hexdigest())
        if version == 2
        else ("xxh3_128", xxhash.xxh3_128_hexdigest(body))
    )
    document = {"format": FORMAT, "payload": payload, key: digest, "version": version}
    path.write_text(json.dumps(document, sort_keys=True, separators=(",", ":")) + end)
    return body


def canonical(value: Any) -> bytes:
    """Sorted keys, no spaces: the bytes a snapshot's digest is of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def write_state(path: Path, state: Any, version: int) -> None:
    """The whole ``state`` (a ``SearchState``) as the lone snapshot of a ``version`` volume at
    ``path`` (its journal removed): an Optuna search's results column as the JSON list that
    versions 4 to 6 kept."""
    told = state.cursor.get("told") if isinstance(state.cursor, dict) else None
    cursor = state.cursor if told is None else {**state.cursor, "told": told.entries()}
    names = ("experiment", "algorithm", "seed", "space")
    payload = {name: getattr(state, name) for name in names}
    write_snapshot(path, {**payload, "cursor": cursor, "issued": list(state.issued)}, version)
    path.with_name("suggestion-state.journal").unlink(missing_ok=True)


def write_volume(
    directory: Path, older: Any, newer: Any, version: int, cursor_of: Callable[[Any], Any]
) -> Any:
    """A ``version`` volume in ``directory``: the snapshot of ``older`` (its XXH3 computed
    here) and a journal record taking it to ``newer``, each cursor as that version kept it
    (``cursor_of``); the record's change of the cursor."""
    names = ("experiment", "algorithm", "seed", "space")
    payload = {name: getattr(older, name) for name in names}
    payload |= {"cursor": cursor_of(older.cursor), "issued": list(older.issued)}
    digest = xxhash.xxh3_128_hexdigest(
        write_snapshot(directory / state.FILE_NAME, payload, version, end="\n")
    )
    change = diff(cursor_of(older.cursor), cursor_of(newer.cursor))
    batch = list(newer.issued[len(older.issued) :])
    line, _ = journal.frame(state.canonical(change) + b"\t" + state.canonical(batch), digest)
    (directory / JOURNAL_NAME).write_bytes(journal.header(digest) + line)
    return change
