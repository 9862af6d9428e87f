"""The Kubernetes Events read back from disk are decoded when first read, and are the same."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake import StateFileError, load
from katib_resume.adapters.fake.deferred import Deferred
from katib_resume.adapters.fake.persistence import STATE_FILE, close, read
from katib_resume.core.actions import ObjectRef

REF = ObjectRef("v1", "Pod", "ns", "p")


@given(st.lists(st.integers()), st.lists(st.integers()), st.lists(st.integers()))
def test_a_deferred_list_is_the_list_it_stands_for(
    held: list[int], stored: list[int], appended: list[int]
) -> None:
    reads: list[int] = []

    def read(entries: object) -> list[int]:
        reads.append(1)
        return [int(str(e)) for e in stored]

    deferred: Deferred[int] = Deferred()
    deferred.extend(held)
    deferred.defer([str(e) for e in stored], read)
    for value in appended:
        deferred.append(value)
    expected = stored + held + appended  # what was read back comes first
    assert len(deferred) == len(expected) and reads == []  # counting decodes nothing
    assert deferred == expected and list(deferred) == expected and deferred[1:] == expected[1:]
    assert len(reads) == (1 if stored else 0)  # decoded once, on the first read
    assert deferred != [*expected, 0]
    assert (deferred == "text") is False


class _Stored(list[str]):
    """Stored entries with an index that names every entry of the key and some others (as
    the store's names the Events whose object it does not know)."""

    def about(self, key: object) -> list[str]:
        return [entry for entry in self if int(entry) % 3 == key or int(entry) % 2 == 0]


@given(st.lists(st.integers(0, 9)), st.lists(st.integers(0, 9)), st.integers(0, 2))
def test_a_deferred_list_read_by_a_key_is_the_list_matched(
    stored: list[int], appended: list[int], key: int
) -> None:
    deferred: Deferred[int] = Deferred()
    deferred.defer(_Stored(str(e) for e in stored), lambda entries: [int(e) for e in entries])
    deferred.extend(appended)
    found = deferred.where(key, lambda value: value % 3 == key)
    assert found == [value for value in stored + appended if value % 3 == key]
    assert list(deferred) == stored + appended
    assert deferred.where(key, lambda value: value % 3 == key) == found  # and once all are read


def test_events_reopened_are_the_events_recorded_and_a_damaged_one_fails_its_read(
    tmp_path: Path,
) -> None:
    cluster, world = load(tmp_path)
    for i in range(5):
        cluster.record_event(REF, "Normal", "Seen", f"seen {i}")
    recorded = list(cluster.events)
    close(world)
    again, world = load(tmp_path)
    assert len(again.events) == 5
    again.record_event(REF, "Warning", "Later", "after the restart")
    assert again.events[:5] == recorded and again.events[5].reason == "Later"
    close(world)
    assert read(tmp_path).events == [*recorded, again.events[5]]
    db = sqlite3.connect(tmp_path / STATE_FILE)
    with db:
        db.execute("UPDATE events SET body = '{\"ref\": 1}' WHERE id = 2")
    db.close()
    damaged = read(tmp_path)  # opening reads no Event: the damage shows when one is read
    assert len(damaged.events) == 6
    with pytest.raises(StateFileError, match=STATE_FILE):
        list(damaged.events)
