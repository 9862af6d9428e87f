"""What the embedded runtime keeps of its folds between commands, so a restart parses what changed.

A runtime's first reconcile of an Experiment folds every one of its Trials into the trial
ledger (``app.loop.trial_book``) and the suggestion service's result book
(``app.embedded.results``): a parse of each Trial, the whole history, on every restart. When
the runtime closes, ``Summaries.save`` keeps each Experiment's folds in the state's
``summaries`` table (``adapters.fake.sqlite``), in one transaction: every own Trial's ledger
record and result entry, with the ``resourceVersion`` it was made from, under the
Experiment's identity and objective (``trial_book.basis_text``), the Experiment's Trials
found settled (``app.embedded.settled``), and what the ledger proved of the Suggestion's
assignments (``app.embedded.vouched``, trusted only while no Trial is written since). The next
runtime's books recall them for a page they read in full; a restart passes over a Trial held at
a settled version without judging it again.

A summary is written whole once, then kept as changes: a command that recalled it appends one
row to ``summary_changes`` holding what it changed (the records and entries of the Trials it
parsed, the names gone, the Trials newly settled), so a command's save costs what it changed,
not the history. Each change names the summary it extends (``id``); a read applies a
summary's changes in order. The summary is written whole again (its changes dropped in the
same transaction) when there is none to extend, when a book was folded for another basis,
after ``CHANGES`` changes, or when a change would be as large as a quarter of the summary; so
a read applies at most ``CHANGES`` changes and the settled versions of Trials that changed
since do not pile up. A part a runtime did not read (an Experiment it never folded) is kept
as it was.

Nothing kept is trusted blindly. A record is used only for a Trial the cache holds at the very
version it was made from (a ``resourceVersion`` names one state of one object in this database,
which the tables live in and are emptied with), and only for the Experiment and objective it
was folded for; every other Trial is parsed and folded as without a summary, and a record whose
Trial is gone is dropped. A summary or change that cannot be decoded makes the summary
ignored; a change naming another summary (one written whole by another build) is skipped. So a
command killed before it could save (``kill -9``) leaves the summary of the command before: the
Trials that changed since no longer match their versions and are folded again, nothing is lost.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import orjson

from katib_resume.adapters.fake.sqlite import Journal, summary_key
from katib_resume.app.embedded import kept_rows as rows
from katib_resume.app.embedded.kept_rows import UNREADABLE
from katib_resume.app.embedded.results import KeptResults, ResultBook
from katib_resume.app.embedded.vouched import Vouched, trusted
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.trial_book import Kept, TrialBook
from katib_resume.app.loop.versions import Seen
from katib_resume.core.katib import API_VERSION

CHANGES = 16
"""The changes a summary is read with at most: the next save writes it whole."""
Settled = Mapping[Key, Sequence[Seen]]


@dataclass
class Summary:
    """One Experiment's summary as read: its changes applied."""

    id: str | None
    ledger: Kept | None
    results: KeptResults | None
    settled: set[Seen] = field(default_factory=set)
    changes: int = 0
    vouched: Vouched | None = None
    """What the close that kept it proved of the Suggestion's assignments (``vouched``)."""

    def size(self) -> int:
        """Rows held: what a change is weighed against."""
        records = 0 if self.ledger is None else len(self.ledger.records)
        entries = 0 if self.results is None else len(self.results.entries)
        return records + entries + len(self.settled)


def _object(key: Key) -> tuple[str, str, str, str]:
    return API_VERSION, "Experiment", key.namespace, key.name


class Summaries:
    """The summaries a state holds, decoded per Experiment when a book recalls one."""

    def __init__(self, journal: Journal | None) -> None:
        self.journal = journal
        self.bodies: dict[str, str] = {}
        self.changes: dict[str, list[str]] = {}
        if journal is not None:
            with contextlib.suppress(sqlite3.Error):  # an optimisation: none is as good
                self.bodies, self.changes = journal.summaries(), journal.summary_changes()
        self.decoded: dict[str, Summary | None] = {}

    def summary(self, key: Key) -> Summary | None:
        """``key``'s summary, its changes applied; ``None`` if it has none or it cannot be read."""
        return self._decode(summary_key(_object(key)))

    def _decode(self, text: str) -> Summary | None:
        if text not in self.decoded:
            body, changes = self.bodies.pop(text, None), self.changes.pop(text, [])
            try:
                self.decoded[text] = None if body is None else _read(body, changes)
            except UNREADABLE:
                self.decoded[text] = None
        return self.decoded[text]

    def trials(self, key: Key) -> Kept | None:
        """The trial book's kept fold of ``key`` (``TrialBook.recall``), with what the
        summary vouches for if it still holds (``vouched.trusted``)."""
        summary = self.summary(key)
        if summary is None or summary.ledger is None:
            return None
        told = trusted(self.journal, summary.vouched, key.namespace)
        return summary.ledger if told is None else replace(summary.ledger, vouched=told)

    def results(self, key: Key) -> KeptResults | None:
        """The result book's kept entries of ``key`` (``ResultBook.recall``)."""
        summary = self.summary(key)
        return None if summary is None else summary.results

    def settled(self) -> set[Seen]:
        """The Trial versions every summary names settled (``app.embedded.settled``); a
        summary that cannot be read names none."""
        for text in list(self.bodies):
            self._decode(text)
        found: set[Seen] = set()
        for summary in self.decoded.values():
            if summary is not None:
                found |= summary.settled
        return found

    def save(
        self,
        book: TrialBook,
        results: ResultBook,
        newly: Settled | None = None,
        settled: Callable[[], Settled] | None = None,
        vouched: Mapping[Key, Vouched] | None = None,
    ) -> None:
        """Keep every Experiment's folds (both books'), settled Trials and what is vouched
        for its assignments (``vouched``: none for an Experiment it leaves out), in one
        transaction: as a change of its summary (``newly``: the Trials found settled since the
        summaries were read) or whole (``settled()``: all of its settled Trials now). Not those
        of an Experiment deleted meanwhile, whose row went with it."""
        if self.journal is None:
            return
        whole: dict[tuple[str, str, str, str], str] = {}
        changes: dict[tuple[str, str, str, str], str] = {}
        everything: Settled | None = None
        for key in {*book.pages, *results.pages}:
            if key.kind != "Experiment":
                continue
            base = self.summary(key)
            added = list((newly or {}).get(key, ()))
            told = (vouched or {}).get(key)
            change = (
                None if base is None else _change(base, book, results, key, added, vouched=told)
            )
            if change is not None:
                if change:
                    changes[_object(key)] = orjson.dumps(change).decode()
                continue
            if everything is None:
                everything = settled() if settled is not None else (newly or {})
            body = _whole(base, book, results, key, list(everything.get(key, ())), vouched=told)
            whole[_object(key)] = orjson.dumps(body).decode()
        with contextlib.suppress(sqlite3.Error):  # the next restart folds in full instead
            self.journal.summarise(whole, changes)


def _read(body: str, changes: Sequence[str]) -> Summary:
    """A summary from its row and its changes' (``UNREADABLE`` if any cannot be read)."""
    raw = orjson.loads(body)
    ledger, results = raw["ledger"], raw["results"]
    summary = Summary(
        raw.get("id"),
        None if ledger is None else Kept(str(ledger["basis"]), rows.records_of(ledger["records"])),
        None if results is None else _kept_results(results),
        rows.seen_set(raw.get("settled") or []),
        vouched=Vouched.read(raw.get("vouched")),
    )
    for text in changes:
        change = orjson.loads(text)
        if summary.id is None or change["base"] != summary.id:
            continue  # of another summary
        _apply(summary, change)
    return summary


def _kept_results(raw: dict[str, Any]) -> KeptResults:
    return KeptResults(str(raw["basis"]), rows.entries_of(raw["entries"]))


def _apply(summary: Summary, change: dict[str, Any]) -> None:
    """``change`` applied to ``summary`` (``UNREADABLE`` if it does not apply)."""
    ledger, results = change["ledger"], change["results"]
    if ledger is not None:
        if summary.ledger is None:
            raise KeyError("a change of a ledger the summary has not")
        records = _changed(summary.ledger.records, ledger, rows.records_of)
        summary.ledger = Kept(summary.ledger.basis, records)
    if results is not None:
        if summary.results is None:
            raise KeyError("a change of entries the summary has not")
        entries = _changed(summary.results.entries, results, rows.entries_of)
        summary.results = KeptResults(summary.results.basis, entries)
    summary.settled |= rows.seen_set(change["settled"])
    summary.vouched = Vouched.read(change.get("vouched"))  # each change says it anew
    summary.changes += 1


_Held = TypeVar("_Held")


def _changed(
    held: Mapping[str, _Held], part: dict[str, Any], read: Callable[[Any], dict[str, _Held]]
) -> dict[str, _Held]:
    """``held`` with one part's change: its rows (read by ``read``) put, its names gone."""
    changed = {**held, **read(part["put"])}
    for name in rows.names_of(part["gone"]):
        changed.pop(name, None)
    return changed


def _change(
    base: Summary,
    book: TrialBook,
    results: ResultBook,
    key: Key,
    added: list[Seen],
    *,
    vouched: Vouched | None,
) -> dict[str, Any] | None:
    """What changed of ``base`` as a change row (empty: nothing changed), or ``None`` if the
    summary must be written whole. A book without a fold of ``key`` changes nothing."""
    if base.id is None or base.changes >= CHANGES:
        return None
    try:
        ledger, entries = book.since(key, base.ledger), results.since(key, base.results)
    except ValueError:  # a book folded for another basis, or a part the summary has not
        return None
    size = len(added) + sum(len(put) + len(gone) for put, gone in filter(None, (ledger, entries)))
    if size > max(base.size() // 4, CHANGES):
        return None
    if not size and vouched == base.vouched:
        return {}
    return {
        "base": base.id,
        "ledger": None if ledger is None else _part(rows.record_rows(ledger[0]), *ledger),
        "results": None if entries is None else _part(rows.entry_rows(entries[0]), *entries),
        "settled": added,
        "vouched": _vouched(vouched),
    }


def _vouched(vouched: Vouched | None) -> list[int] | None:
    """A claim as a summary keeps it (``Vouched.read`` reads it back)."""
    return None if vouched is None else list(vouched)


def _part(written: list[list[Any]], put: Mapping[str, Any], gone: set[str]) -> dict[str, Any]:
    """A part's change: the rows written, and the names gone (a row not written, holding a
    value JSON has not, goes too: its Trial is parsed again)."""
    unwritten = put.keys() - {row[0] for row in written}
    return {"put": written, "gone": sorted(gone | unwritten)}


def _whole(
    base: Summary | None,
    book: TrialBook,
    results: ResultBook,
    key: Key,
    settled: list[Seen],
    *,
    vouched: Vouched | None,
) -> dict[str, Any]:
    """The summary of ``key`` whole, a new ``id``: the books' folds, or the base's parts the
    books do not hold."""
    ledger = book.kept(key) or (None if base is None else base.ledger)
    entries = results.kept(key) or (None if base is None else base.results)
    return {
        "id": secrets.token_hex(8),
        "ledger": None
        if ledger is None
        else {"basis": ledger.basis, "records": rows.record_rows(ledger.records)},
        "results": None
        if entries is None
        else {"basis": entries.basis, "entries": rows.entry_rows(entries.entries)},
        "settled": settled,
        "vouched": _vouched(vouched),
    }
