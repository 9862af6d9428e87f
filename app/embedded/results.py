"""The finished Trials' results each suggestion service is given, kept between calls.

A call to a suggestion service carries the objective value of every finished Trial of its
Experiment. Reading them afresh on every call walks every Trial, so a run's cost grows with the
square of its trials. ``ResultBook`` keeps them per Experiment, with a cursor into the watch
cache's index bucket of the Experiment's label (``core.objects.IndexedCache``, as the trial
book does): a call reads the Trials that changed since the last one, parses those only, and
hands out a copy of the kept table. A book kept for another Experiment of the same name (a new
UID) or another objective is thrown away and read again in full, as is one whose bucket the
cache could not follow (``Delta.complete``).

Given a ``recall`` (``app.embedded.kept``), a page read in full starts from the entries kept
from an earlier book for the same Experiment and objective: a Trial the cache holds at the
version its entry was made from takes it unparsed, any other is parsed (as the trial book does).

The Experiment's settled Trials may be sealed in blocks (``core.blocks``) the cache holds
unread: a page read in full takes their entries from the blocks' notes (``app.embedded.notes``)
instead of the Trials, and hands them out with the others in one mapping that decodes a note's
entries only when something reads one of them (``_Joined``): the random search reads none. A
block whose note does not fit it, or was made for another Experiment or objective, is read
from the cache and its Trials taken as any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import itemgetter, ne, not_

from katib_resume.adapters.local.suggestion.results import trial_results
from katib_resume.app.embedded.notes import Note, Notes
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.trial_book import basis_text
from katib_resume.app.loop.versions import seen_of
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.objects import Cursor, IndexedCache, key_of, version_of
from katib_resume.core.trials import is_own

Results = dict[str, float | None]
Basis = tuple[str | None, ObjectiveSpec | None]
Entries = Mapping[str, tuple[str, Results]]
"""Each Trial's entry by name, with the ``resourceVersion`` it was made from."""


@dataclass(frozen=True, slots=True)
class KeptResults:
    """An earlier book's entries for one Experiment (``basis_text``): each Trial's entry by
    name, with the ``resourceVersion`` it was made from."""

    basis: str
    entries: Mapping[str, tuple[str, Results]]


@dataclass
class Page:
    basis: Basis
    cursor: Cursor | None = None
    by_trial: dict[str, Results] = field(default_factory=dict)
    """Each Trial's own entry (empty while it runs), by name."""
    results: Results = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    """The ``resourceVersion`` each Trial's entry was made from."""
    text: str = ""
    """The ``basis_text`` of the Experiment the page is for."""
    notes: tuple[Note, ...] = ()
    """The notes of the blocks the page's bucket holds unread, whose entries stand for their
    Trials'."""


class ResultBook:
    def __init__(
        self,
        parse: Callable[[Manifest], Trial] = Trial.model_validate,
        recall: Callable[[Key], KeptResults | None] | None = None,
    ) -> None:
        self.parse, self.recall = parse, recall
        self.notes = Notes()
        """The blocks' notes (the runtime's, which its trial book reads too)."""
        self.pages: dict[Key, Page] = {}

    def kept(self, key: Key) -> KeptResults | None:
        """The page's entries as ``recall`` will give them back (``None``: no page)."""
        page = self.pages.get(key)
        if page is None:
            return None
        entries = {name: (page.versions[name], entry) for name, entry in page.by_trial.items()}
        return KeptResults(page.text, entries)

    def since(self, key: Key, kept: KeptResults | None) -> tuple[Entries, set[str]] | None:
        """The page's entries (``kept(key)``) as changes to ``kept``, those it was recalled
        from: the entries made from another version than ``kept``'s (a Trial's entry taken at
        its kept version is kept's own), and the names ``kept`` holds that the page does not;
        ``None`` without a page of ``key``. ``ValueError`` if the page is for another basis
        than ``kept``'s, or there is no ``kept`` (it must be kept whole)."""
        page = self.pages.get(key)
        if page is None:
            return None
        if kept is None or page.text != kept.basis:
            raise ValueError("the page is for another basis")
        versions, held = page.versions, kept.entries
        was = map(_VERSION, map(held.get, versions, repeat(_UNKEPT)))
        changed = list(compress(versions, map(ne, versions.values(), was)))
        put = {name: (versions[name], page.by_trial[name]) for name in changed}
        return put, held.keys() - versions.keys()

    def results(self, cache: IndexedCache, experiment: Experiment) -> Mapping[str, float | None]:
        """Trial name -> objective value (``None``: failed) of ``experiment``'s finished
        Trials, as ``trial_results`` gives them for the Trials the cache holds now."""
        key = Key(experiment.namespace, experiment.metadata.name)
        basis: Basis = (experiment.metadata.uid, experiment.spec.objective)
        page = self.pages.get(key)
        if page is None or page.basis != basis:
            page = self.pages[key] = Page(basis)
        try:
            return self._read(cache, experiment, key, page)
        except BaseException:
            self.pages.pop(key, None)  # (see ``_read``)
            raise

    def _read(
        self, cache: IndexedCache, experiment: Experiment, key: Key, page: Page
    ) -> Mapping[str, float | None]:
        """``results``, bringing ``page`` to the cache.

        A Trial's entry, its version and the table of results change one after the other, and
        the cursor after them all; so a call stopped part-way (a stop signal's
        ``KeyboardInterrupt`` lands between any two bytecodes) may leave an entry without its
        version, or a version without its entry, which a closing runtime's ``kept`` and
        ``since`` would fail on (a ``KeyError`` out of the close: no summary saved, and a
        traceback and exit status 1 where a stopped command exits with 130). So ``results``
        drops the page of a call that did not finish: the next call reads it in full, and a
        close meanwhile keeps the Experiment's entries of the command before and seals none of
        its Trials (``app.embedded.sealing`` seals only what both books hold)."""
        name = experiment.metadata.name
        bucket = (API_VERSION, "Trial", LABEL_EXPERIMENT, name)
        delta = cache.changes(*bucket, page.cursor, blocks=True)
        kept: Entries = {}
        if delta.complete:
            page.by_trial, page.results, page.versions = {}, {}, {}
            page.text = basis_text(experiment)
            noted = self.notes.of(delta.blocks, page.text)
            if noted is None:  # a block its note does not describe: its Trials are read
                delta = cache.changes(*bucket, page.cursor)
            page.notes = noted or ()
            recalled = None if self.recall is None else self.recall(key)
            if recalled is not None and recalled.basis == page.text:
                kept = recalled.entries
        if kept:  # a whole bucket, the Trials kept at their version adopted in bulk
            self._fill(page, experiment, delta.changed, kept)
        for obj in () if kept else delta.changed:
            taken = self._entry(experiment, obj)
            if taken is not None:
                self._put(page, key_of(obj)[3], *taken)
        for namespace, trial_name in delta.removed:
            if namespace == key.namespace:
                self._put(page, trial_name, {}, "")
        page.cursor = delta.cursor
        return _Joined(page.notes, dict(page.results)) if page.notes else dict(page.results)

    @staticmethod
    def _put(page: Page, name: str, entry: Results, version: str) -> None:
        for gone in page.by_trial.pop(name, {}):
            page.results.pop(gone, None)
        page.versions.pop(name, None)
        if entry:
            page.by_trial[name] = entry
            page.versions[name] = version
            page.results.update(entry)

    def forget(self, key: Key, names: Iterable[str]) -> None:
        """The Trials ``names``' entries are no longer the book's to keep (sealed into a block
        whose note keeps them): ``kept`` and ``since`` leave them out."""
        page = self.pages[key]
        for name in names:
            self._put(page, name, {}, "")

    def entry(self, experiment: Experiment, obj: Manifest) -> Results | None:
        """The entry the book would make of the Trial ``obj`` as it is (``None``: none, a
        Trial of another namespace or without a result): for one it has not read yet."""
        taken = self._entry(experiment, obj)
        return taken[0] if taken is not None and taken[0] else None

    def _entry(self, experiment: Experiment, obj: Manifest) -> tuple[Results, str] | None:
        """A Trial's entry, parsed, and its version; ``None`` for one of another namespace."""
        if key_of(obj)[2] != experiment.namespace:
            return None
        own = is_own(experiment, trial := self.parse(obj))
        return (trial_results(experiment, [trial]) if own else {}), version_of(obj)

    def _fill(
        self, page: Page, experiment: Experiment, changed: Sequence[Manifest], kept: Entries
    ) -> None:
        """Fill an emptied ``page`` from a whole bucket, ``changed``: each Trial ``kept``
        holds at its version takes its entry unparsed, found in C-level passes over the bucket
        (``app.loop.versions``); only the others are parsed, in Python.

        The page is made in the bucket's order, as putting the entries one by one makes it (an
        algorithm may read the results in their order): a bucket names each Trial once, so no
        entry replaces another's, and the tables built from the entries in order are the ones
        ``_put`` would leave. An empty entry (a Trial still running) is not put."""
        namespace = experiment.namespace
        wanted = {(namespace, name, version) for name, (version, _) in kept.items()}
        seen = seen_of(changed)
        hits = list(map(wanted.__contains__, seen))
        names = list(map(_NAME, seen))
        held = list(map(kept.get, names, repeat(_NONE)))
        for at in compress(range(len(held)), map(not_, hits)):
            taken = self._entry(experiment, changed[at])
            held[at] = _NONE if taken is None else (taken[1], taken[0])
        entries = list(map(_ENTRY, held))
        filled = list(map(bool, entries))
        names, entries = list(compress(names, filled)), list(compress(entries, filled))
        page.by_trial = dict(zip(names, entries, strict=True))
        page.versions = dict(zip(names, map(_VERSION, compress(held, filled)), strict=True))
        page.results = dict(chain.from_iterable(map(dict.items, entries)))


class _Joined(Mapping[str, float | None]):
    """The blocks' results (their notes' entries, decoded when first read) and the page's:
    one mapping, the blocks' first (their Trials are the older), names never shared (a Trial
    is in one block, or held by the cache)."""

    __slots__ = ("_held", "_notes", "_whole")

    def __init__(self, noted: tuple[Note, ...], held: Results) -> None:
        self._notes, self._held = noted, held
        self._whole: Results | None = None

    def _all(self) -> Results:
        if self._whole is None:
            entries = (entry for note in self._notes for _, entry in note.entries.values())
            self._whole = dict(chain.from_iterable(map(dict.items, entries)))
            self._whole.update(self._held)
        return self._whole

    def __getitem__(self, name: str) -> float | None:
        if name in self._held:
            return self._held[name]
        return self._all()[name]

    def __contains__(self, name: object) -> bool:
        return name in self._held or name in self._all()

    def __len__(self) -> int:
        if self._whole is not None:
            return len(self._whole)
        return len(self._held) + sum(note.size for note in self._notes)

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())


_NONE: tuple[str, Results] = ("", {})
"""The entry of a Trial that has none (of another namespace): not put."""
_UNKEPT: tuple[str | None, Results] = (None, {})
"""What ``since`` reads for a Trial the kept entries do not hold: no version matches it."""
_VERSION, _ENTRY, _NAME = itemgetter(0), itemgetter(1), itemgetter(1)
"""A held entry's version and entry; a ``Seen``'s name."""
