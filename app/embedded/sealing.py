"""Sealing each Experiment's settled Trials into blocks when a command ends (``core.blocks``).

A restart that opens thousands of settled Trials one by one pays for the history on every
command. When the runtime closes, each Experiment it folded has its settled Trials (finished,
finalizer in place, no run object left: ``app.embedded.settled``) sealed into a block by the
store (``adapters.fake.store.Store.seal``), with a note of what the books folded from them
(``app.embedded.notes``); the next command holds the block unread and its books start from the
note. A Trial is sealed only where everything the note says of it is current: the trial book and
the result book hold it at the version the store holds, it is settled at that version, and its
record and results are values JSON can hold. Fewer than ``SEAL_AT`` such Trials stay as they are
(the summary keeps them, ``app.embedded.kept``), so a command that finished a few Trials does not
make a block of a few.

An Experiment's blocks are merged as they accumulate, the newest into the one before while it is
at least half that one's size, or while there are more than ``MOST`` (as a log-structured merge
does): a restart reads at most ``MOST`` notes per Experiment, and each Trial is rewritten into a
bigger block a logarithmic number of times over the history. A block whose note no longer fits
it (a member written since: the store took it out; an objective edited) is read by the books,
which fold its Trials as any others, and is noted again here from their records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from katib_resume.adapters.fake.store import Store
from katib_resume.app.embedded import kept_rows as rows
from katib_resume.app.embedded import notes
from katib_resume.app.embedded.results import Page, ResultBook, Results
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.trial_book import TrialBook
from katib_resume.app.loop.versions import Seen
from katib_resume.core.actions import ObjectRef
from katib_resume.core.blocks import Block, Field
from katib_resume.core.digest import Digest, digest_of
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment
from katib_resume.core.model import Trial as TrialModel
from katib_resume.core.object_index import EVERY, OWNER, Index
from katib_resume.core.objects import INDEXED_LABELS, version_of
from katib_resume.core.trial_ledger import TrialLedger, TrialRecord

SEAL_AT = 32
"""Settled Trials an Experiment gathers before they are sealed."""
MOST = 8
"""Blocks an Experiment keeps at most (more are merged)."""
_INDEX = Index(INDEXED_LABELS)
Trial = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class _Member:
    key: Trial
    obj: Manifest
    record: TrialRecord
    entry: Results | None

    @property
    def version(self) -> str:
        return version_of(self.obj)


def seal(store: Store, book: TrialBook, results: ResultBook, known: set[Seen]) -> None:
    """Seal the settled Trials of every Experiment both books folded, note again its blocks
    whose notes no longer fit, and merge its blocks (the store knows the Trials sealed:
    ``member_of``)."""
    for key in sorted(book.pages.keys() & results.pages.keys()):
        experiment = _experiment(store, key)
        page, entries = book.pages[key], results.pages[key]
        if experiment is None or page.ledger is None or page.basis != entries.text:
            continue
        fields = _fields(experiment)
        books = _Books(store, page.ledger, page.basis, entries, results, experiment)
        members = [
            member
            for name, version in _versions(page.models, page.raw)
            if (member := books.sealable(name, version, known, fields)) is not None
        ]
        if len(members) >= SEAL_AT:
            store.seal([m.key for m in members], *_note(page.basis, members))
            names = [m.key[3] for m in members]  # the note keeps what the books held of them
            book.forget(key, names)
            results.forget(key, names)
        for block in _blocks(store, key, fields):
            books.renote(block)
        _merge(store, page.basis, _blocks(store, key, fields))


def _experiment(store: Store, key: Key) -> Experiment | None:
    """The Experiment ``key``, if it is stored and not deleting."""
    found = store.find(ObjectRef(API_VERSION, "Experiment", key.namespace, key.name))
    if found is None or found["metadata"].get("deletionTimestamp"):
        return None
    return Experiment.model_validate(found)


def _fields(experiment: Experiment) -> frozenset[Field]:
    """The index fields of the Experiment's own Trials."""
    own = (OWNER, experiment.metadata.uid or "")
    return frozenset({(EVERY, ""), (LABEL_EXPERIMENT, experiment.metadata.name), own})


@dataclass(frozen=True, slots=True)
class _Books:
    """One Experiment's folds in both books, against the store's objects."""

    store: Store
    ledger: TrialLedger
    basis: str
    entries: Page
    results: ResultBook
    experiment: Experiment

    def sealable(
        self, name: tuple[str, str], version: str, known: set[Seen], fields: frozenset[Field]
    ) -> _Member | None:
        """The Trial ``name``, held outside any block at ``version`` and settled there, as a
        member of a new block, if nothing ties it (``_alone``)."""
        trial: Trial = (API_VERSION, "Trial", name[0], name[1])
        if trial in self.store.member_of or (name[0], name[1], version) not in known:
            return None
        member = self.member(trial, version)
        return member if member is not None and _alone(self.store, member.obj, fields) else None

    def member(self, trial: Trial, version: str) -> _Member | None:
        """``trial`` as a block's member, if the store and both books hold it at ``version``
        and its record and results are values a note can hold."""
        obj = self.store.objects.get(trial)
        if obj is None or version_of(obj) != version:
            return None
        name = trial[3]
        record = self.ledger.record(name)
        if record is None or not rows.writable_record(record):
            return None
        entry = self.entries.by_trial.get(name)
        if self.entries.versions.get(name) != version:  # not read at this version yet
            entry = self.results.entry(self.experiment, obj)
        if entry is not None and not rows.writable_entry(entry):
            return None
        return _Member(trial, obj, record, entry)

    def renote(self, block: Block) -> None:
        """Note ``block`` again from the books if its note does not fit it any more and it
        was read (its Trials were then folded one by one, so the books hold them)."""
        note = notes.read(block)
        if (
            note is not None and note.basis == self.basis
        ) or block.id not in self.store.sealed.read:
            return
        members = []
        for trial in self.store.sealed.members.get(block.id, {}):
            held = self.store.objects.get(trial)
            member = None if held is None else self.member(trial, version_of(held))
            if member is None:
                return
            members.append(member)
        if members and _digest(members) == block.digest:
            self.store.merge([block.id], *_note(self.basis, members))


def _versions(
    models: Mapping[tuple[str, str], TrialModel], raw: Mapping[tuple[str, str], Manifest]
) -> Iterable[tuple[tuple[str, str], str]]:
    """Each Trial of a trial book's page and the version the page holds it at."""
    for name, model in models.items():
        yield name, str(model.metadata.resource_version or "")
    for name, obj in raw.items():
        yield name, version_of(obj)


def _alone(store: Store, obj: Manifest, fields: frozenset[Field]) -> bool:
    """Whether ``obj`` is under the Experiment's fields, not deleting, and owns nothing."""
    meta = obj["metadata"]
    if meta.get("deletionTimestamp") or _INDEX.fields(obj) != fields:
        return False
    return not store.owners.dependents_of(str(meta.get("uid") or ""))


def _note(basis: str, members: list[_Member]) -> tuple[str, str]:
    """The note and detail of a block of ``members``, at the digest the store gives it."""
    records = {m.key[3]: (m.version, m.record) for m in members}
    entries = {m.key[3]: (m.version, m.entry) for m in members if m.entry is not None}
    return notes.written(basis, _digest(members), records, entries)


def _digest(members: list[_Member]) -> Digest:
    """The digest of ``members``, as the store counts their block."""
    return digest_of([m.obj for m in members])


def _blocks(store: Store, key: Key, fields: frozenset[Field]) -> list[Block]:
    """The Experiment's blocks, read or not, oldest first."""
    place = (API_VERSION, "Trial", key.namespace)
    return [
        block
        for block in store.every_block()
        if (block.api_version, block.kind, block.namespace) == place and block.fields == fields
    ]


def _merge(store: Store, basis: str, blocks: list[Block]) -> None:
    """Merge the newest of ``blocks`` into the one before while it is at least half its size
    or there are more than ``MOST``, each merged note made from the two notes."""
    while len(blocks) >= 2:
        older, newer = blocks[-2], blocks[-1]
        if newer.digest.size * 2 < older.digest.size and len(blocks) <= MOST:
            return
        first, second = notes.read(older), notes.read(newer)
        if first is None or second is None or not first.basis == second.basis == basis:
            return
        records = {**first.records, **second.records}
        entries = {**first.entries, **second.entries}
        digest = older.digest.plus(newer.digest)
        written = notes.written(basis, digest, records, entries)
        merged = store.merge([older.id, newer.id], *written)
        blocks[-2:] = [merged]
