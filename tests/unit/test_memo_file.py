"""The trial memo kept on the volume (``app/suggestion/memo_file.py``): what it holds reads back
as it was (a result's NaN, infinities and -0.0 too); a file of another reading is not read; a
volume it cannot be written to stops the persisting with one warning, and the calls go on.
Its reads over any sequence of requests, restarts and damaged files are held to decoding every
Trial by ``tests/property/test_trial_message.py``."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

import pytest

from katib_resume.app.suggestion import memo_file, trial_memo
from katib_resume.app.suggestion.memo_file import MemoFile
from katib_resume.app.suggestion.trial_memo import Known, TrialMemo
from tests.property.test_trial_message import request_keys

ITEM = '{"labels":{"a":"b"},"name":"t","parameterAssignments":[{"name":"x","value":"1"}]}'


def _entries() -> list[tuple[str, Known]]:
    values = [0.5, -0.0, math.inf, -math.inf, math.nan]
    known = [
        Known(ITEM, "2026-01-01T00:00:00Z", (f"t{i}", v), (f"t{i}", v))
        for i, v in enumerate(values)
    ]
    known += [Known(ITEM, None, ("failed", None), None), Known(ITEM, None, None, None)]
    return [(f"{i:032x}", entry) for i, entry in enumerate(known)]


def test_what_the_file_holds_reads_back_as_it_was(tmp_path: Path) -> None:
    entries = _entries()
    MemoFile(tmp_path / "memo", "loss").save(entries[:3], lambda: entries[:3])
    MemoFile(tmp_path / "memo", "loss").save(entries[3:], lambda: entries)  # (appended)
    held = MemoFile(tmp_path / "memo", "loss").load()
    assert held.keys() == dict(entries).keys()
    for digest, entry in entries:
        read = held[digest]
        assert (read.item, read.started) == (entry.item, entry.started)
        assert repr(read.result) == repr(entry.result)  # (NaN == NaN is false; repr is not)
        assert repr(read.succeeded) == repr(entry.succeeded)
    assert MemoFile(tmp_path / "memo", None).load() == {}  # another objective metric


def test_a_file_of_another_reading_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = _entries()
    MemoFile(tmp_path / "memo", "loss").save(entries, lambda: entries)
    monkeypatch.setattr(memo_file, "READING", trial_memo.READING + 1)
    assert MemoFile(tmp_path / "memo", "loss").load() == {}


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a read-only directory")
def test_a_volume_it_cannot_write_stops_the_persisting_not_the_calls(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tmp_path.chmod(0o500)
    try:
        memo = TrialMemo("loss", MemoFile(tmp_path / "memo", "loss"))
        trials = [_trial(f"t{i}") for i in range(3)]
        with caplog.at_level(logging.WARNING):
            for count in (1, 2, 3):
                assert len(memo.read(request_keys(trials[:count], reverse=False))) == count
        warnings = [r for r in caplog.records if "trial memo cannot be written" in r.message]
        assert len(warnings) == 1
    finally:
        tmp_path.chmod(0o700)


def test_a_full_disk_stops_the_persisting_not_the_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def full(descriptor: int, *_: object, **__: object) -> None:
        os.close(descriptor)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fdopen", full)
    memo = TrialMemo("loss", MemoFile(tmp_path / "memo", "loss"))
    trials = [_trial(f"t{i}") for i in range(3)]
    with caplog.at_level(logging.WARNING):
        for count in (1, 2, 3):
            assert len(memo.read(request_keys(trials[:count], reverse=False))) == count
    assert [r for r in caplog.records if "No space left" in r.message]
    assert not (tmp_path / "memo").exists() and not (tmp_path / "memo.tmp").exists()


def _trial(name: str) -> dict[str, object]:
    return {
        "name": name,
        "objective": (1, 0.0, "loss", []),
        "assignments": [("x", "1")],
        "labels": {},
        "times": ("", ""),
        "condition": 0,
        "metrics": [("loss", "0.5")],
    }
