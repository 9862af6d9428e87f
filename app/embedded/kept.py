"""What the embedded runtime keeps of its folds between commands, so a restart parses what changed.

A runtime's first reconcile of an Experiment folds every one of its Trials into the trial
ledger (``app.loop.trial_book``) and the suggestion service's result book
(``app.embedded.results``): a parse of each Trial, the whole history, on every restart. When
the runtime closes, ``Summaries.save`` writes each Experiment's folds to the state's
``summaries`` table (``adapters.fake.sqlite``), in one transaction: every own Trial's ledger
record and result entry, with the ``resourceVersion`` it was made from, under the
Experiment's identity and objective (``trial_book.basis_text``). The next runtime's books recall
them for a page they read in full. An Experiment's summary is deleted with the Experiment.

Nothing kept is trusted blindly. A record is used only for a Trial the cache holds at the very
version it was made from (a ``resourceVersion`` names one state of one object in this database,
which the table lives in and is emptied with), and only for the Experiment and objective it was
folded for; every other Trial is parsed and folded as without a summary, and a record whose Trial
is gone is dropped. A summary that cannot be decoded is ignored. So a command killed before it
could save (``kill -9``) leaves the summary of the command before: the Trials that changed since
no longer match their versions and are folded again, and nothing is lost.

Each summary also names the Experiment's Trials that were settled when it was written, by
namespace, name and ``resourceVersion`` (``app.embedded.settled``): a restart passes over a Trial
held at one of those versions without judging it again.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import Any, TypeVar

import orjson

from katib_resume.adapters.fake.sqlite import Journal, summary_key
from katib_resume.app.embedded.results import KeptResults, ResultBook, Results
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.trial_book import Kept, TrialBook
from katib_resume.app.loop.versions import Seen
from katib_resume.core.katib import API_VERSION
from katib_resume.core.trial_ledger import TrialRecord
from katib_resume.core.trials import TrialPhase

_UNREADABLE = (orjson.JSONDecodeError, ValueError, KeyError, TypeError, IndexError)
_Part = TypeVar("_Part", Kept, KeptResults)
_PHASES = {phase.value: phase for phase in TrialPhase}
"""``TrialPhase(text)`` as a look-up (an unknown phase is a ``KeyError``: unreadable)."""
_NUMBERS = frozenset({float, type(None)})
"""The types of a kept result read as it is (an integer is made a float)."""


def _object(key: Key) -> tuple[str, str, str, str]:
    return API_VERSION, "Experiment", key.namespace, key.name


def _text(key: Key) -> str:
    return summary_key(_object(key))


class Summaries:
    """The summaries a state holds, decoded per Experiment when a book recalls one."""

    def __init__(self, journal: Journal | None) -> None:
        self.bodies: dict[str, str] = {}
        if journal is not None:
            with contextlib.suppress(sqlite3.Error):  # an optimisation: none is as good
                self.bodies = journal.summaries()
        self.decoded: dict[str, dict[str, Any] | None] = {}

    def _summary(self, key: Key) -> dict[str, Any] | None:
        return self._decode(_text(key))

    def _decode(self, text: str) -> dict[str, Any] | None:
        if text not in self.decoded:
            body = self.bodies.pop(text, None)
            try:
                found = None if body is None else orjson.loads(body)
            except _UNREADABLE:
                found = None
            self.decoded[text] = found if isinstance(found, dict) else None
        return self.decoded[text]

    def trials(self, key: Key) -> Kept | None:
        """The trial book's kept fold of ``key`` (``TrialBook.recall``)."""
        return self._part(key, "ledger", _kept_ledger)

    def results(self, key: Key) -> KeptResults | None:
        """The result book's kept entries of ``key`` (``ResultBook.recall``)."""
        return self._part(key, "results", _kept_results)

    def _part(self, key: Key, field: str, read: Callable[[Any], _Part | None]) -> _Part | None:
        """One field of ``key``'s summary, read by ``read``; ``None`` if it cannot be."""
        summary = self._summary(key)
        try:
            return None if summary is None else read(summary[field])
        except _UNREADABLE:
            return None

    def settled(self) -> set[Seen]:
        """The Trial versions every summary names settled (``app.embedded.settled``); a
        summary that cannot be read names none."""
        for text in list(self.bodies):
            self._decode(text)
        found: set[Seen] = set()
        for summary in self.decoded.values():
            with contextlib.suppress(*_UNREADABLE):
                found |= set() if summary is None else _seen(summary.get("settled") or [])
        return found

    @staticmethod
    def save(
        journal: Journal | None,
        book: TrialBook,
        results: ResultBook,
        settled: Mapping[Key, Sequence[Seen]] | None = None,
    ) -> None:
        """Write every Experiment's folds (both books') and settled Trials, in one
        transaction: not those of an Experiment deleted meanwhile, whose row went with it."""
        if journal is None:
            return
        bodies = {}
        for key in {*book.pages, *results.pages}:
            if key.kind != "Experiment":
                continue
            summary = {
                "ledger": _ledger_of(book.kept(key)),
                "results": _results_of(results, key),
                "settled": list((settled or {}).get(key, ())),
            }
            bodies[_object(key)] = orjson.dumps(summary).decode()
        with contextlib.suppress(sqlite3.Error):  # the next restart folds in full instead
            journal.summarise(bodies)


def _ledger_of(kept: Kept | None) -> dict[str, Any] | None:
    if kept is None:
        return None
    records = [
        [name, version, r.phase.value, r.key, list(r.assignments), list(r.metrics)]
        for name, (version, r) in kept.records.items()
        if r.key is None or math.isfinite(r.key)  # JSON has no NaN: such a Trial is parsed
    ]
    return {"basis": kept.basis, "records": records}


def _kept_ledger(raw: dict[str, Any] | None) -> Kept | None:
    if raw is None:
        return None
    rows = raw["records"]
    plain = _plain_records(rows)
    if plain is not None:
        return Kept(str(raw["basis"]), plain)
    records = {}
    for name, version, phase, value, assignments, metrics in rows:
        key = None if value is None else float(value)
        record = TrialRecord(str(name), _PHASES[phase], key, tuple(assignments), tuple(metrics))
        records[record.name] = (str(version), record)
    return Kept(str(raw["basis"]), records)


def _plain_records(rows: Any) -> dict[str, tuple[str, TrialRecord]] | None:
    """The kept ledger records read in C-level passes when every row is plain, as ``save``
    writes them (``[name, version, phase, key, assignments, metrics]``: text, text, a phase's
    text, a float or null, two lists): what the loop of ``_kept_ledger`` makes of them. ``None``
    for any other rows (an integer key, another shape), which the loop reads (or refuses)."""
    columns = _columns(rows, 6)
    if not columns:
        return None if columns is None else {}
    names, versions, phases, keys, assignments, metrics = columns
    if not {*map(type, names), *map(type, versions)} <= {str}:
        return None
    if not _NUMBERS.issuperset(map(type, keys)):
        return None
    if not {*map(type, assignments), *map(type, metrics)} <= {list}:
        return None
    made = map(
        TrialRecord,
        names,
        map(_PHASES.__getitem__, phases),  # an unknown phase: ``KeyError``, unreadable
        keys,
        map(tuple, assignments),
        map(tuple, metrics),
    )
    return dict(zip(names, zip(versions, made, strict=True), strict=True))


def _results_of(book: ResultBook, key: Key) -> dict[str, Any] | None:
    kept = book.kept(key)
    if kept is None:
        return None
    entries = [
        [name, version, entry]
        for name, (version, entry) in kept.entries.items()
        if all(value is None or math.isfinite(value) for value in entry.values())
    ]
    return {"basis": kept.basis, "entries": entries}


def _seen(raw: Any) -> set[Seen]:
    """The kept versions, as ``seen_of`` gives them (an entry of any other shape or type
    matches no Trial's; one that cannot be hashed makes the list unreadable)."""
    if type(raw) is not list:
        raise TypeError("not a list of Trial versions")
    return set(map(tuple, raw))


def _kept_results(raw: dict[str, Any] | None) -> KeptResults | None:
    if raw is None:
        return None
    rows = raw["entries"]
    entries = _plain_entries(rows)
    if entries is None:
        entries = {}
        for name, version, entry in rows:
            values = dict(entry)  # JSON's keys are text; its numbers are floats but integers
            if not _NUMBERS.issuperset(map(type, values.values())):
                values = {str(k): None if v is None else float(v) for k, v in values.items()}
            entries[str(name)] = (str(version), values)
    return KeptResults(str(raw["basis"]), entries)


def _plain_entries(rows: Any) -> dict[str, tuple[str, Results]] | None:
    """The kept entries read in C-level passes when every row is plain, as ``save`` writes
    them (``[name, version, entry]``: text, text, and an object of floats or nulls): what the
    loop of ``_kept_results`` would make of them (a copy of each entry). ``None`` for any
    other rows (integers, another shape), which the loop reads (or refuses) one by one."""
    columns = _columns(rows, 3)
    if not columns:
        return None if columns is None else {}
    names, versions, values = columns
    if not {*map(type, names), *map(type, versions)} <= {str}:
        return None
    if not set(map(type, values)) <= {dict}:
        return None
    if not _NUMBERS.issuperset(map(type, chain.from_iterable(map(dict.values, values)))):
        return None
    return dict(zip(names, zip(versions, map(dict, values), strict=True), strict=True))


def _columns(rows: Any, width: int) -> list[tuple[Any, ...]] | None:
    """The columns of ``rows``, a list of lists of ``width`` items each, by C-level passes
    (``[]`` for no rows); ``None`` for anything else, which the summary's loops read (or
    refuse) row by row."""
    if type(rows) is not list or not set(map(type, rows)) <= {list}:
        return None
    if rows and set(map(len, rows)) != {width}:
        return None
    return list(zip(*rows, strict=True))
