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
again, another worker's book, a new Experiment of the same name, an edited objective). A cluster
without the index (``Cluster`` alone) is listed and folded in full on every reconcile.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeGuard

from katib_resume.app.loop.keys import Key
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.kube import Manifest
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.objects import Cursor, Delta, IndexedCache, key_of
from katib_resume.core.ports import Cluster
from katib_resume.core.trial_ledger import TrialLedger, advance, ledger_of

Parse = Callable[[Manifest], Trial]
Name = tuple[str, str]


@dataclass
class _Page:
    cursor: Cursor | None = None
    models: dict[Name, Trial] = field(default_factory=dict)
    trials: tuple[Trial, ...] = ()
    ledger: TrialLedger | None = None


@functools.cache
def _indexed_type(cls: type) -> bool:
    return issubclass(cls, IndexedCache)


def indexed(cluster: Cluster) -> TypeGuard[IndexedCache]:
    """Whether ``cluster`` is an ``IndexedCache``, decided once per class: checking a runtime
    protocol on an instance walks the protocol's members on every call (about 9 µs, on
    every reconcile of an Experiment, against 0.07 µs)."""
    return _indexed_type(type(cluster))


class TrialBook:
    def __init__(self) -> None:
        self.pages: dict[Key, _Page] = {}

    def read(
        self, cluster: Cluster, key: Key, experiment: Experiment | None, parse: Parse
    ) -> tuple[tuple[Trial, ...], TrialLedger | None]:
        """The Trials labelled for ``key`` in its namespace, and their ledger for
        ``experiment`` (``None`` without an Experiment, or without an indexed cache)."""
        if not indexed(cluster):
            listed = cluster.list(API_VERSION, "Trial", key.namespace, {LABEL_EXPERIMENT: key.name})
            return tuple(parse(obj) for obj in listed), None
        page = self.pages.setdefault(key, _Page())
        delta = cluster.changes(API_VERSION, "Trial", LABEL_EXPERIMENT, key.name, page.cursor)
        changed, removed = self._turn(page, key.namespace, delta, parse)
        if experiment is None:
            if not page.models:
                del self.pages[key]  # nothing left to remember
            page.ledger = None
            return page.trials, None
        ledger = page.ledger
        if ledger is not None:
            ledger = advance(ledger, experiment, changed, [name for _, name in removed])
        page.ledger = ledger if ledger is not None else ledger_of(experiment, page.trials)
        return page.trials, page.ledger

    @staticmethod
    def _turn(
        page: _Page, namespace: str, delta: Delta, parse: Parse
    ) -> tuple[list[Trial], list[Name]]:
        """Bring ``page`` to ``delta``; the Trials of ``namespace`` it changed and removed."""
        if delta.complete:
            page.models, page.ledger = {}, None
        changed = []
        for obj in delta.changed:
            name = key_of(obj)[2:]
            if name[0] == namespace:
                page.models[name] = model = parse(obj)
                changed.append(model)
        removed = [name for name in delta.removed if name[0] == namespace]
        for name in removed:
            page.models.pop(name, None)
        if changed or removed or delta.complete:
            page.trials = tuple(page.models.values())
        page.cursor = delta.cursor
        return changed, removed

    def counts(self) -> Mapping[Key, int]:
        """The Trials remembered per Experiment (for tests and benchmarks)."""
        return {key: len(page.models) for key, page in self.pages.items()}
