"""``app.embedded.notes``: a block's note read back as written, used only for its block as it was
sealed, and a damaged part found when it is first needed."""

from __future__ import annotations

import pytest

from katib_resume.adapters.fake.lazy import DamagedObject
from katib_resume.app.embedded import notes
from katib_resume.app.embedded.results import _Joined
from katib_resume.core.blocks import Block
from katib_resume.core.digest import Digest
from katib_resume.core.trial_ledger import TrialRecord
from katib_resume.core.trial_phases import TrialPhase

DIGEST = Digest(3, 12345)
RECORDS = {
    "t2": ("7", TrialRecord("t2", TrialPhase.SUCCEEDED, 0.5, ({"name": "x", "value": "1"},), ())),
    "t1": ("5", TrialRecord("t1", TrialPhase.SUCCEEDED, 0.25, (), ({"name": "m"},))),
    "t3": ("9", TrialRecord("t3", TrialPhase.FAILED, None)),
}
ENTRIES: dict[str, tuple[str, dict[str, float | None]]] = {
    "t1": ("5", {"t1": 0.25}),
    "t2": ("7", {"t2": 0.5}),
    "t3": ("9", {"t3": None}),
}


def _block(written: tuple[str, str], digest: Digest = DIGEST) -> Block:
    note, detail = written
    return Block(
        7,
        "kubeflow.org/v1beta1",
        "Trial",
        "ns",
        frozenset(),
        digest,
        note,
        list,
        bool,
        detail=lambda: detail,
    )


def test_a_note_reads_back_its_names_best_records_and_entries() -> None:
    note = notes.read(_block(notes.written("basis", DIGEST, RECORDS, ENTRIES)))
    assert note is not None and note.basis == "basis"
    assert note.base.names.names(TrialPhase.SUCCEEDED) == ("t1", "t2")
    assert note.base.names.names(TrialPhase.FAILED) == ("t3",)
    assert note.base.best == RECORDS["t1"][1]
    assert note.records == RECORDS and note.entries == ENTRIES and note.size == 3
    assert sorted(note.record_list()) == sorted(record for _, record in RECORDS.values())


def test_a_note_describes_its_block_only_at_the_digest_it_was_sealed_at() -> None:
    head, detail = notes.written("basis", DIGEST, RECORDS, ENTRIES)
    assert notes.read(_block((head, detail), Digest(2, 12345))) is None  # a member taken out
    assert notes.read(_block((head.replace('"v":1', '"v":2'), detail))) is None
    assert notes.read(_block(("{}", detail))) is None
    assert notes.read(_block(("not json", detail))) is None


def test_a_head_whose_names_are_out_of_order_describes_no_block() -> None:
    """A base looks a name up by binary search: names out of order (not the best's phase's,
    whose check would refuse them anyway) make the note unusable, and the block is read."""
    failed = {
        name: (version, TrialRecord(name, TrialPhase.FAILED, None))
        for name, version in (("t3", "9"), ("t4", "11"))
    }
    head, detail = notes.written("basis", DIGEST, {**RECORDS, **failed}, ENTRIES)
    assert notes.read(_block((head, detail))) is not None
    unsorted = head.replace('["t3","t4"]', '["t4","t3"]')
    assert unsorted != head and notes.read(_block((unsorted, detail))) is None


def test_a_damaged_part_is_found_when_first_needed_and_not_before() -> None:
    head, detail = notes.written("basis", DIGEST, RECORDS, ENTRIES)
    entries = detail.split("\n")[1]
    note = notes.read(_block((head, "[[1, 2\n" + entries)))
    assert note is not None and note.entries == ENTRIES  # the head and entries read
    with pytest.raises(DamagedObject, match="block 7"):
        _ = note.records
    lost = notes.read(_block((head, "")))
    assert lost is not None  # the head alone says what a restart needs
    with pytest.raises(DamagedObject, match="no detail"):
        _ = lost.entries


def test_the_joined_results_read_a_note_only_for_a_name_the_page_does_not_hold() -> None:
    note = notes.read(_block(notes.written("basis", DIGEST, RECORDS, ENTRIES)))
    assert note is not None
    joined = _Joined((note,), {"t4": 1.0})
    assert len(joined) == 4 and joined["t4"] == 1.0
    assert "entries" not in note.__dict__  # not decoded yet
    assert dict(joined) == {"t1": 0.25, "t2": 0.5, "t3": None, "t4": 1.0}
    assert "t3" in joined and "t9" not in joined and len(joined) == 4


def test_a_runtime_reads_each_block_s_note_once_for_both_books() -> None:
    block = _block(notes.written("basis", DIGEST, RECORDS, ENTRIES))
    other = _block(notes.written("other", DIGEST, RECORDS, ENTRIES))
    shared = notes.Notes()
    first = shared.read(block)
    assert first is not None and shared.read(block) is first  # one decode for both books
    assert shared.of([block], "basis") == (first,)
    assert shared.of([block, other], "basis") is None  # a note made for another basis
    base = shared.ledger_base([block], "basis")
    assert base is first.base and shared.ledger_base([other], "basis") is None
