"""What a command's close proves of each Experiment's assignments, so the next restart need not.

The trial ledger's ``unused`` proves, on an Experiment's first reconcile, that the Suggestion's
assignments from the first on each have a Trial (it keeps how many, and tests only the later
ones from then on). A restart's ledger starts without that: at 5,000 assignments it read every
name from the stored texts and matched them against the sealed Trials' names, about 1.7 ms of a
24 ms restart, the one part of its proof that grew with the history.

So the close keeps the count with the Experiment's summary (``app.embedded.kept``): a
``Vouched``, saying that at store revision ``revision`` the first ``held`` items of the stored
chain ``chain`` (the Suggestion's ``status.suggestions``, ``core.history.Stored``) were each
named for one of the Experiment's Trials. It is proved by the ledger itself, and only when the
ledger is current: the cache has seen every write, and no Trial of the Experiment's changed
since the ledger last read them (``proved``). A chain is named once and its items never change,
so the claim stays true for as long as the Trials do: the next runtime trusts it only if no
Trial of the namespace was written since ``revision`` (``trusted``, a look in the log's rows
since), and hands it to its ledger (``core.trial_ledger.TrialLedger.vouched``), which drops it
at its first removal. Anything else (a write of a Trial, a log that no longer reaches back, a
Suggestion made anew) and the ledger proves it all again, as without a summary.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from katib_resume.adapters.fake.sqlite import Journal
from katib_resume.adapters.fake.store import Store
from katib_resume.app.loop.informer import Informer
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.trial_book import TrialBook
from katib_resume.core.history import Stored
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.objects import version_of


class Vouched(NamedTuple):
    """At ``revision``, the first ``held`` items of the chain ``chain`` had Trials."""

    chain: int
    held: int
    revision: int

    @classmethod
    def read(cls, raw: Any) -> Vouched | None:
        """A claim as a summary keeps it (three integers); ``None`` for anything else."""
        if type(raw) is not list or len(raw) != 3 or not all(type(v) is int for v in raw):
            return None
        return cls(*raw)


def proved(informer: Informer, store: Store, book: TrialBook, key: Key) -> Vouched | None:
    """What the ledger of the Experiment ``key`` proves of its Suggestion's stored assignments
    now, if the ledger is current (the cache caught up with the store, and no Trial of the
    Experiment's changed since the ledger's page last read them) and the Suggestion's
    assignments are a stored chain; ``None`` otherwise."""
    journal, page = store.journal, book.pages.get(key)
    if journal is None or page is None or page.ledger is None or page.cursor is None:
        return None
    if informer.cursor != store.log.cursor:
        return None  # writes the cache has not seen
    bucket = (API_VERSION, "Trial", LABEL_EXPERIMENT, key.name)
    delta = informer.changes(*bucket, page.cursor, blocks=True)  # (no block read to say so)
    if delta.complete or delta.changed or delta.removed:
        return None
    suggestion = (API_VERSION, "Suggestion", key.namespace, key.name)
    obj, stored = store.objects.get(suggestion), journal.chains.get(suggestion)
    if obj is None or stored is None or str(stored[0]) != version_of(obj):
        return None
    _, chain, held = stored
    history = (obj.get("status") or {}).get("suggestions")
    if history is None:
        return None
    return Vouched(chain, min(page.ledger.assigned(history), held), store.version)


def trusted(journal: Journal | None, vouched: Vouched | None, namespace: str) -> Stored | None:
    """``vouched`` as the restart's ledger may take it: if no Trial of ``namespace`` was
    written since it was proved."""
    if journal is None or vouched is None:
        return None
    if journal.written_since(vouched.revision, "Trial", namespace):
        return None
    return Stored(vouched.chain, vouched.held)
