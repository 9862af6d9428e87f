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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from katib_resume.adapters.local.suggestion.results import trial_results
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.trial_book import basis_text
from katib_resume.app.loop.versions import seen_of
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.kube import Manifest
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
class _Page:
    basis: Basis
    cursor: Cursor | None = None
    by_trial: dict[str, Results] = field(default_factory=dict)
    """Each Trial's own entry (empty while it runs), by name."""
    results: Results = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    """The ``resourceVersion`` each Trial's entry was made from."""
    text: str = ""
    """The ``basis_text`` of the Experiment the page is for."""


class ResultBook:
    def __init__(
        self,
        parse: Callable[[Manifest], Trial] = Trial.model_validate,
        recall: Callable[[Key], KeptResults | None] | None = None,
    ) -> None:
        self.parse, self.recall = parse, recall
        self.pages: dict[Key, _Page] = {}

    def kept(self, key: Key) -> KeptResults | None:
        """The page's entries as ``recall`` will give them back (``None``: no page)."""
        page = self.pages.get(key)
        if page is None:
            return None
        entries = {name: (page.versions[name], entry) for name, entry in page.by_trial.items()}
        return KeptResults(page.text, entries)

    def results(self, cache: IndexedCache, experiment: Experiment) -> Results:
        """Trial name -> objective value (``None``: failed) of ``experiment``'s finished
        Trials, as ``trial_results`` gives them for the Trials the cache holds now."""
        key = Key(experiment.namespace, experiment.metadata.name)
        basis: Basis = (experiment.metadata.uid, experiment.spec.objective)
        page = self.pages.get(key)
        if page is None or page.basis != basis:
            page = self.pages[key] = _Page(basis)
        name = experiment.metadata.name
        delta = cache.changes(API_VERSION, "Trial", LABEL_EXPERIMENT, name, page.cursor)
        kept: Entries = {}
        if delta.complete:
            page.by_trial, page.results, page.versions = {}, {}, {}
            page.text = basis_text(experiment)
            recalled = None if self.recall is None else self.recall(key)
            if recalled is not None and recalled.basis == page.text:
                kept = recalled.entries
        matched = _matched(key.namespace, delta.changed, kept) if kept else None
        for obj, held in zip(delta.changed, matched or [None] * len(delta.changed), strict=True):
            if held is not None:  # ``kept`` holds it at its version: its entry, in its place
                trial_name, (version, entry) = held
                if entry:
                    page.by_trial[trial_name], page.versions[trial_name] = entry, version
                    page.results.update(entry)
                continue
            namespace, trial_name = key_of(obj)[2:]
            if namespace != key.namespace:
                continue
            version = version_of(obj)
            trial = self.parse(obj)
            own = is_own(experiment, trial)
            self._put(page, trial_name, trial_results(experiment, [trial]) if own else {}, version)
        for namespace, trial_name in delta.removed:
            if namespace == key.namespace:
                self._put(page, trial_name, {}, "")
        page.cursor = delta.cursor
        return dict(page.results)

    @staticmethod
    def _put(page: _Page, name: str, entry: Results, version: str) -> None:
        for gone in page.by_trial.pop(name, {}):
            page.results.pop(gone, None)
        page.versions.pop(name, None)
        if entry:
            page.by_trial[name] = entry
            page.versions[name] = version
            page.results.update(entry)


def _matched(
    namespace: str, changed: Sequence[Manifest], kept: Entries
) -> list[tuple[str, tuple[str, Results]] | None]:
    """For each of ``changed``, its name and kept entry if ``kept`` holds it at its version in
    ``namespace`` (else ``None``), matched in one C-level pass (``app.loop.versions``). The
    page is filled in the bucket's order all the same, as a fold from scratch fills it (an
    algorithm may read the results in their order)."""
    wanted = {(namespace, name, version) for name, (version, _) in kept.items()}
    seen = seen_of(changed)
    hits = map(wanted.__contains__, seen)
    return [(at[1], kept[at[1]]) if hit else None for at, hit in zip(seen, hits, strict=True)]
