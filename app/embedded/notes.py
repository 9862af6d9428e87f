"""A block's note: what the books folded from its members, sealed with them (``core.blocks``).

When a command ends, the runtime seals each Experiment's settled Trials into a block
(``app.embedded.sealing``), and the store keeps this note with it, unread, handing it back with
the block. A restart's books start from the notes of an Experiment's blocks instead of reading
its Trials: the trial ledger from each phase's names and the best record
(``core.trial_ledger.LedgerBase``), the result book from the entries (``app.embedded.results``).

A note is the block's *head*, a JSON text the store keeps as the block's ``note`` (read with the
block's record when the state is opened, and decoded when the block is first used), and its
*detail*, the block's ``detail`` (read from disk only when called): the members' ledger records
and result entries (``kept_rows``' rows), two JSON texts on two lines (``orjson`` writes no
newline inside a text, escaping any a string holds), fetched and decoded only when something
needs one of them: a member's record once its Trial changed, an algorithm that reads every
result. The head also holds the digest the block had when it was sealed; a block whose digest
is not that any more (a member written since, which the store takes out of the block) has a
note that does not describe it, and is read instead (``read`` answers ``None``).

Nothing in a note is trusted beyond what it was made from: it is used only for the block it was
sealed with, at that block's digest, and for the Experiment and objective it was folded for
(``basis``: ``app.loop.trial_book.basis_text``). A head that cannot be read makes the note
unusable (the block is read); a part that cannot be read when it is first needed is a damaged
state (``DamagedObject``, as a Trial's body is: one line, exit status 2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

import orjson

from katib_resume.adapters.fake.lazy import DamagedObject
from katib_resume.app.embedded import kept_rows as rows
from katib_resume.app.embedded.kept_rows import UNREADABLE
from katib_resume.core.blocks import Block
from katib_resume.core.digest import Digest
from katib_resume.core.trial_ledger import LedgerBase, TrialRecord
from katib_resume.core.trial_phases import TrialPhase
from katib_resume.core.trials import FIELD_OF, TrialCounts

_T = TypeVar("_T")
VERSION = 1
"""The note's layout: a note of another is not read (its block is)."""
_PHASES = {phase.value: phase for phase in TrialPhase}
Results = dict[str, float | None]
Records = Mapping[str, tuple[str, TrialRecord]]
Entries = Mapping[str, tuple[str, Results]]


def written(basis: str, digest: Digest, records: Records, entries: Entries) -> tuple[str, str]:
    """The note and detail of a block of the Trials ``records`` names (each one
    ``kept_rows.writable_record``), with ``entries`` (``writable_entry``) for those that have
    one, sealed at ``digest``: the head's names and best are the ledger base the records make
    (``LedgerBase.of``: one definition of the best, the ledger's)."""
    base = LedgerBase.of(record for _, record in records.values())
    names = {phase.value: base.names.names(phase) for phase in TrialPhase}
    best = base.best
    head = {
        "v": VERSION,
        "basis": basis,
        "digest": [digest.size, digest.total],
        "names": {phase: listed for phase, listed in names.items() if listed},
        "best": None if best is None else rows.record_rows({best.name: records[best.name]})[0],
        "entries": sum(len(entry) for _, entry in entries.values()),
    }
    parts = (rows.record_rows(records), rows.entry_rows(entries))
    return orjson.dumps(head).decode(), "\n".join(orjson.dumps(part).decode() for part in parts)


@dataclass(frozen=True)
class Note:
    """A note's head, read; its records and entries decoded when first asked for."""

    block: Block
    basis: str
    size: int
    """How many results the note's entries hold (a mapping of them has this length)."""
    names: TrialCounts
    best: TrialRecord | None

    @cached_property
    def base(self) -> LedgerBase:
        """The trial ledger's base of the block: the head's names and best, its records read
        when the ledger needs one (made by ``read``, which refuses a best it does not rank)."""
        return LedgerBase(self.names, self.best, self.record_list)

    @cached_property
    def _detail(self) -> tuple[str, str]:
        """The records' line and the entries' line of the block's detail (fetched once)."""
        try:
            records, entries = self.block.detail().split("\n")
        except ValueError:  # no block, or not two lines
            message = f"the stored block {self.block.id} of {self.block.kind}s has no detail"
            raise DamagedObject(message) from None
        return records, entries

    @cached_property
    def records(self) -> dict[str, tuple[str, TrialRecord]]:
        """The members' ledger records by name (decoded once)."""
        return _decoded(self.block, self._detail[0], rows.records_of)

    @cached_property
    def entries(self) -> dict[str, tuple[str, Results]]:
        """The members' result entries by name (decoded once)."""
        return _decoded(self.block, self._detail[1], rows.entries_of)

    def record_list(self) -> Iterable[TrialRecord]:
        """The records alone, as a ledger base reads them."""
        return [record for _, record in self.records.values()]


class Notes:
    """The notes of one runtime's blocks, each read once: the trial book and the result book
    both start from an Experiment's blocks, and a head holds every sealed Trial's name."""

    def __init__(self) -> None:
        self._read: dict[Block, Note | None] = {}

    def read(self, block: Block) -> Note | None:
        """``read(block)``, once per block (a ``Block`` is compared by identity)."""
        if block not in self._read:
            self._read[block] = read(block)
        return self._read[block]

    def of(self, blocks: Sequence[Block], basis: str) -> tuple[Note, ...] | None:
        """The notes of ``blocks`` if each describes its block and was made for ``basis``."""
        found = tuple(map(self.read, blocks))
        if any(note is None or note.basis != basis for note in found):
            return None
        return tuple(note for note in found if note is not None)

    def ledger_base(self, blocks: Sequence[Block], basis: str) -> LedgerBase | None:
        """The ledger base of an Experiment's unread ``blocks`` (``TrialBook``'s ``noted``):
        ``None`` unless every block's note describes it and was made for ``basis``."""
        found = self.of(blocks, basis)
        return None if found is None else LedgerBase.joined(note.base for note in found)


def read(block: Block) -> Note | None:
    """``block``'s note if it describes the block as it is (the digest it was sealed at, its
    layout), else ``None``."""
    try:
        head = orjson.loads(block.note)
        if type(head) is not dict or head.get("v") != VERSION:
            return None
        size, total = head["digest"]
        if Digest(int(size), int(total)) != block.digest:
            return None
        names = {_PHASES[phase]: _names(listed) for phase, listed in head["names"].items()}
        best = head["best"]
        best_record = None if best is None else rows.records_of([best])[str(best[0])][1]
        counts = TrialCounts(**{FIELD_OF[phase]: listed for phase, listed in names.items()})
        note = Note(block, str(head["basis"]), int(head["entries"]), counts, best_record)
        _ = note.base  # a base refuses a best it does not rank: the note is unusable then
        return note
    except (*UNREADABLE, AttributeError):  # a LedgerBase refuses a best it does not rank
        return None


def _names(listed: Any) -> tuple[str, ...]:
    """A phase's names as the head holds them: a sorted list of text, checked at C speed (a
    ``LedgerBase`` looks a name up by binary search)."""
    if type(listed) is not list or not set(map(type, listed)) <= {str}:
        raise TypeError("not a list of names")
    if listed != sorted(listed):  # one pass of a sort over a sorted list, one of identities
        raise ValueError("names out of order")
    return tuple(listed)


def _decoded(block: Block, text: str, read: Callable[[Any], _T]) -> _T:
    try:
        return read(orjson.loads(text))
    except UNREADABLE:
        message = f"the stored block {block.id} of {block.kind}s cannot be decoded"
        raise DamagedObject(message) from None
