"""Each Experiment's Trials and trial ledger, kept between reconciles and fed only what changed.

Katib lists every Trial of an Experiment on every reconcile and recounts them; with thousands of
Trials that walk is most of a reconcile, and it grows with history. ``TrialBook`` keeps, per
Experiment, the parsed Trials by name, the ``core.trial_ledger.TrialLedger`` folded from them,
and a cursor into the watch cache's index bucket of the Experiment's label (``IndexedCache``:
the informer and the Kubernetes adapter's cluster both are one). A reconcile asks the cache for
the Trials that changed since the cursor, parses those only, and advances the ledger with them
(the core's pure ``advance``): its cost is what changed.

Nothing here is trusted more than the cache: the ledger is a function of the Trials the cache
holds now, folded in full whenever the book is cold (first reconcile, a bucket dropped and made
again, another worker's book, a new Experiment of the same name, an edited objective, a read
stopped part-way). A cluster without the index (``Cluster`` alone) is listed and folded in full
on every reconcile.

A book given a ``recall`` (the embedded runtime's, ``app.embedded.kept``) starts a cold page
from an earlier fold instead: each Trial's record as it was folded, with the ``resourceVersion``
it was folded at, for the same Experiment and objective (``basis_text``). A Trial the cache holds
at that very version takes its record unparsed (its object is parsed only if the planner walks
the Trials: ``trials`` is then a lazy sequence); any other is parsed and folded; a record
whose Trial is gone is dropped. So a restart parses what changed since the fold was kept, and
the ledger is the one a full fold would give (the property tests hold the two together). A
kept fold may also vouch for the Suggestion's first stored assignments (``Kept.vouched``: each
has a Trial), and the ledger made from it is told so (``TrialLedger.vouched``).

A book given a ``noted`` reads the Experiment's settled Trials sealed in blocks the cache holds
unread (``core.blocks``) from the blocks themselves: ``noted`` turns the blocks (and the
Experiment's ``basis_text``) into a ``core.trial_ledger.LedgerBase`` (the embedded runtime's
reads the notes sealed with them, ``app.embedded.notes``), the ledger starts from it, and the
blocks' Trials are read and parsed only if the planner walks the Trials. When ``noted`` cannot
vouch for every block (``None``), the blocks are read from the cache and their Trials taken as
any other's.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter, not_
from typing import TypeGuard, overload

from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.versions import seen_of
from katib_resume.core.blocks import Block
from katib_resume.core.history import Stored
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.objects import Cursor, Delta, IndexedCache, key_of, version_of
from katib_resume.core.ports import Cluster
from katib_resume.core.trial_ledger import (
    LedgerBase,
    TrialLedger,
    TrialRecord,
    advance,
    basis_of,
    ledger_of,
)

Parse = Callable[[Manifest], Trial]
Name = tuple[str, str]
_TRIAL_NAME = itemgetter(1)
"""A ``Name``'s Trial name."""


@dataclass(frozen=True, slots=True)
class Kept:
    """An earlier fold of one Experiment's Trials: for whom (``basis_text``), and each own
    Trial's record by name, with the ``resourceVersion`` it was folded at."""

    basis: str
    records: Mapping[str, tuple[str, TrialRecord]]
    vouched: Stored | None = None
    """Stored assignments that each have a Trial, as the keeper vouches for them now: the
    ledger made from this fold is told so (``TrialLedger.vouched``)."""


Recall = Callable[[Key], "Kept | None"]
Noted = Callable[[Sequence[Block], str], LedgerBase | None]
"""(an Experiment's unread blocks, its ``basis_text``) -> the ledger base they stand for, or
``None`` if some block's Trials must be read."""


def basis_text(experiment: Experiment) -> str:
    """The Experiment's identity and objective as text: a kept fold is for this one only."""
    objective = experiment.spec.objective
    dumped = None if objective is None else objective.model_dump(mode="json", by_alias=True)
    meta = experiment.metadata
    return json.dumps([experiment.namespace, meta.name, meta.uid, dumped], sort_keys=True)


@dataclass
class _Page:
    cursor: Cursor | None = None
    models: dict[Name, Trial] = field(default_factory=dict)
    raw: dict[Name, Manifest] = field(default_factory=dict)
    """Trials taken from a kept fold, not parsed yet (``_Trials`` parses them if read)."""
    trials: Sequence[Trial] = ()
    blocks: tuple[Block, ...] = ()
    """The bucket's blocks the cache holds unread, counted by the ledger's base."""
    ledger: TrialLedger | None = None
    basis: str = ""
    """The ``basis_text`` the ledger was folded for."""


class _Trials(Sequence[Trial]):
    """A page's Trials as they are now, the unparsed ones parsed on the first read of any."""

    def __init__(self, page: _Page, parse: Parse) -> None:
        self.models, self.raw, self.parse = tuple(page.models.values()), dict(page.raw), parse
        self.blocks = page.blocks
        self.held: tuple[Trial, ...] | None = None

    def _all(self) -> tuple[Trial, ...]:
        if self.held is None:
            sealed = (obj for block in self.blocks for obj in block.load())
            raw = (*self.raw.values(), *sealed)
            self.held = (*self.models, *(self.parse(obj) for obj in raw))
        return self.held

    def __len__(self) -> int:
        return len(self.models) + len(self.raw) + sum(block.size for block in self.blocks)

    @overload
    def __getitem__(self, index: int) -> Trial: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Trial, ...]: ...

    def __getitem__(self, index: int | slice) -> Trial | tuple[Trial, ...]:
        return self._all()[index]

    def __iter__(self) -> Iterator[Trial]:
        return iter(self._all())


@functools.cache
def _indexed_type(cls: type) -> bool:
    return issubclass(cls, IndexedCache)


def indexed(cluster: Cluster) -> TypeGuard[IndexedCache]:
    """Whether ``cluster`` is an ``IndexedCache``, decided once per class: checking a runtime
    protocol on an instance walks the protocol's members on every call (about 9 µs, on
    every reconcile of an Experiment, against 0.07 µs)."""
    return _indexed_type(type(cluster))


class TrialBook:
    def __init__(self, recall: Recall | None = None, noted: Noted | None = None) -> None:
        self.pages: dict[Key, _Page] = {}
        self.recall, self.noted = recall, noted

    def read(
        self, cluster: Cluster, key: Key, experiment: Experiment | None, parse: Parse
    ) -> tuple[Sequence[Trial], TrialLedger | None]:
        """The Trials labelled for ``key`` in its namespace, and their ledger for
        ``experiment`` (``None`` without an Experiment, or without an indexed cache)."""
        if not indexed(cluster):
            listed = cluster.list(API_VERSION, "Trial", key.namespace, {LABEL_EXPERIMENT: key.name})
            return tuple(parse(obj) for obj in listed), None
        page = self.pages.setdefault(key, _Page())
        try:
            return self._read(cluster, key, experiment, parse, page)
        except BaseException:
            self.pages.pop(key, None)  # (see ``_read``)
            raise

    def _read(
        self,
        cluster: IndexedCache,
        key: Key,
        experiment: Experiment | None,
        parse: Parse,
        page: _Page,
    ) -> tuple[Sequence[Trial], TrialLedger | None]:
        """``read`` on an indexed cache, bringing ``page`` to it.

        The page takes the Trials' new versions, then moves its cursor, before its ledger
        folds them in; so a read stopped part-way (a stop signal's ``KeyboardInterrupt`` lands
        between any two bytecodes; a Trial that does not parse) leaves a page that says more
        than its ledger knows. What a closing runtime keeps of the page (``kept``, and the
        notes of the Trials it seals: ``app.embedded.sealing``) would then give a Trial its old
        record at its new version, which the next command takes unread: a succeeded Trial
        counted as running for good, so no new Trial is ever made (a handed-over ``run`` whose
        holder got SIGTERM gave up so, ``tests/integration/test_interrupted_fold.py``); and
        once the cursor has moved, the next read here finds nothing changed and keeps the old
        ledger. So ``read`` drops the page of a read that did not finish: the next read folds
        it in full, as a cold page, and a close meanwhile keeps the Experiment's summary of the
        command before and seals none of its Trials."""
        bucket = (API_VERSION, "Trial", LABEL_EXPERIMENT, key.name)
        delta = cluster.changes(*bucket, page.cursor, blocks=self.noted is not None)
        base = self._base(delta, experiment)
        if delta.blocks and base is None:  # a block the book cannot count: its Trials are read
            delta = cluster.changes(*bucket, page.cursor)
        kept = self._kept(key, experiment) if delta.complete else None
        if delta.complete:
            page.blocks = delta.blocks
        changed, removed = self._turn(page, key.namespace, delta, parse, kept)
        if experiment is None:
            if not page.models and not page.raw and not page.blocks:
                del self.pages[key]  # nothing left to remember
            page.ledger = None
            return page.trials, None
        ledger, objective, basis = page.ledger, experiment.spec.objective, basis_of(experiment)
        records = [] if kept is None else [kept.records[name][1] for _, name in page.raw]
        if base is not None:
            joined = LedgerBase.joined([base, LedgerBase.of(records)])
            ledger = TrialLedger.based(objective, joined, basis)
        elif kept is not None:
            ledger = TrialLedger.restored(objective, records, basis)
        if kept is not None and kept.vouched is not None and ledger is not None:
            ledger = ledger.vouched(kept.vouched)
        if ledger is not None:
            ledger = advance(ledger, experiment, changed, [name for _, name in removed])
        page.ledger = ledger if ledger is not None else ledger_of(experiment, page.trials)
        page.basis = basis_text(experiment)
        return page.trials, page.ledger

    def _base(self, delta: Delta, experiment: Experiment | None) -> LedgerBase | None:
        """The ledger base of a whole bucket's unread blocks (``noted``), if it can count them
        for ``experiment``; ``None`` without blocks."""
        if not delta.blocks or self.noted is None or experiment is None:
            return None
        return self.noted(delta.blocks, basis_text(experiment))

    def _kept(self, key: Key, experiment: Experiment | None) -> Kept | None:
        """The recalled fold of ``key``, if it was folded for ``experiment`` as it is now."""
        if self.recall is None or experiment is None:
            return None
        kept = self.recall(key)
        return kept if kept is not None and kept.basis == basis_text(experiment) else None

    def kept(self, key: Key) -> Kept | None:
        """The page's fold as ``recall`` will give it back (``None``: no ledger kept)."""
        page = self.pages.get(key)
        if page is None or page.ledger is None:
            return None
        records = {}
        for name in (*page.models, *page.raw):  # the blocks' records are their notes'
            record = page.ledger.record(name[1])
            model, obj = page.models.get(name), page.raw.get(name)
            version = model.metadata.resource_version if model is not None else None
            version = version if obj is None else version_of(obj)
            if record is not None and version:
                records[record.name] = (version, record)
        return Kept(page.basis, records)

    def forget(self, key: Key, names: Iterable[str]) -> None:
        """The Trials ``names`` of ``key``'s page are no longer the book's to keep (sealed into
        a block whose note keeps their records): ``kept`` and ``since`` leave them out."""
        page = self.pages[key]
        for name in names:
            page.models.pop((key.namespace, name), None)
            page.raw.pop((key.namespace, name), None)

    def since(
        self, key: Key, kept: Kept | None
    ) -> tuple[dict[str, tuple[str, TrialRecord]], set[str]] | None:
        """The page's fold (``kept(key)``) as changes to ``kept``, the fold it was recalled
        from: the records of the Trials parsed since (a Trial taken unparsed is kept's own
        record, unchanged) and the names ``kept`` holds that the fold does not; ``None``
        without a fold of ``key``. ``ValueError`` if the page is folded for another basis than
        ``kept``'s, or there is no ``kept`` (it must be kept whole)."""
        page = self.pages.get(key)
        if page is None or page.ledger is None:
            return None
        if kept is None or page.basis != kept.basis:
            raise ValueError("the page is folded for another basis")
        put = {}
        for (_, name), model in page.models.items():
            record, version = page.ledger.record(name), model.metadata.resource_version
            if record is not None and version:
                put[name] = (version, record)
        gone = kept.records.keys() - put.keys() - set(map(_TRIAL_NAME, page.raw))
        return put, gone

    @staticmethod
    def _turn(
        page: _Page, namespace: str, delta: Delta, parse: Parse, kept: Kept | None = None
    ) -> tuple[list[Trial], list[Name]]:
        """Bring ``page`` to ``delta``; the Trials of ``namespace`` it changed and removed
        (a Trial ``kept`` holds at its version is taken unparsed, into ``raw``)."""
        if delta.complete:
            page.models, page.raw, page.ledger = {}, {}, None
        records = {} if kept is None else kept.records
        changed = []
        for obj in delta.changed if not records else _adopt(page, namespace, delta, records):
            name = key_of(obj)[2:]
            if name[0] != namespace:
                continue
            page.raw.pop(name, None)
            held = records.get(name[1])
            if held is not None and held[0] == version_of(obj):
                page.models.pop(name, None)
                page.raw[name] = obj
                continue
            page.models[name] = model = parse(obj)
            changed.append(model)
        removed = [name for name in delta.removed if name[0] == namespace]
        for name in removed:
            page.models.pop(name, None)
            page.raw.pop(name, None)
        if changed or removed or delta.complete:
            lazy = page.raw or page.blocks
            page.trials = _Trials(page, parse) if lazy else tuple(page.models.values())
        page.cursor = delta.cursor
        return changed, removed

    def counts(self) -> Mapping[Key, int]:
        """The Trials remembered per Experiment, its blocks' counted (for tests and
        benchmarks)."""
        return {
            key: len(page.models) + len(page.raw) + sum(block.size for block in page.blocks)
            for key, page in self.pages.items()
        }


def _adopt(
    page: _Page, namespace: str, delta: Delta, records: Mapping[str, tuple[str, TrialRecord]]
) -> list[Manifest]:
    """Take into ``raw``, unparsed, every Trial of a whole bucket that ``records`` holds at its
    version, in one C-level pass (``app.loop.versions``); the others, to parse and fold."""
    wanted = {(namespace, name, version) for name, (version, _) in records.items()}
    seen = seen_of(delta.changed)
    hits = list(map(wanted.__contains__, seen))
    adopted = zip(map(_NAMED, compress(seen, hits)), compress(delta.changed, hits), strict=True)
    page.raw.update(adopted)
    return list(compress(delta.changed, map(not_, hits)))


_NAMED = itemgetter(0, 1)
"""A ``Seen``'s (namespace, name): a page's ``Name`` (its namespace is the page's, never
``None``, when the version matched)."""
