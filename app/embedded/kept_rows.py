"""A summary's rows (``app.embedded.kept``): the books' kept folds as JSON arrays and back.

A ledger record is ``[name, version, phase, key, assignments, metrics]`` and a result entry
``[name, version, entry]``; a settled Trial is ``[namespace, name, version]``. Rows are read
back in C-level passes when every one is plain, as they are written (``_plain_records``,
``_plain_entries``), and one by one otherwise; a row that cannot be read makes its summary
unreadable (``UNREADABLE``), and the summary is ignored. JSON has no NaN nor infinity: a record
or entry holding one is not written (its Trial is parsed again by the next restart).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import chain
from typing import Any

import orjson

from katib_resume.app.loop.versions import Seen
from katib_resume.core.trial_ledger import TrialRecord
from katib_resume.core.trial_phases import TrialPhase

UNREADABLE = (orjson.JSONDecodeError, ValueError, KeyError, TypeError, IndexError)
"""What reading a damaged summary raises."""
_PHASES = {phase.value: phase for phase in TrialPhase}
"""``TrialPhase(text)`` as a look-up (an unknown phase is a ``KeyError``: unreadable)."""
_NUMBERS = frozenset({float, type(None)})
"""The types of a kept result read as it is (an integer is made a float)."""
Results = dict[str, float | None]
"""A result entry: Trial name -> objective value (``app.embedded.results``'s)."""
Records = Mapping[str, tuple[str, TrialRecord]]
Entries = Mapping[str, tuple[str, Results]]


def writable_record(record: TrialRecord) -> bool:
    """Whether a row can hold ``record`` (JSON has no NaN nor infinity)."""
    return record.key is None or math.isfinite(record.key)


def writable_entry(entry: Results) -> bool:
    """Whether a row can hold ``entry`` (JSON has no NaN nor infinity)."""
    return all(value is None or math.isfinite(value) for value in entry.values())


def record_rows(records: Records) -> list[list[Any]]:
    """The ledger records' rows (not those ``writable_record`` refuses)."""
    return [
        [name, version, r.phase.value, r.key, list(r.assignments), list(r.metrics)]
        for name, (version, r) in records.items()
        if writable_record(r)
    ]


def records_of(rows: Any) -> dict[str, tuple[str, TrialRecord]]:
    """The ledger records of ``rows``, by name."""
    plain = _plain_records(rows)
    return _looped_records(rows) if plain is None else plain


def _looped_records(rows: Any) -> dict[str, tuple[str, TrialRecord]]:
    """The records read one row at a time: any row the bulk pass cannot vouch for."""
    records = {}
    for name, version, phase, value, assignments, metrics in rows:
        key = None if value is None else float(value)
        record = TrialRecord(str(name), _PHASES[phase], key, tuple(assignments), tuple(metrics))
        records[record.name] = (str(version), record)
    return records


def entry_rows(entries: Entries) -> list[list[Any]]:
    """The result entries' rows (not those ``writable_entry`` refuses)."""
    return [
        [name, version, entry]
        for name, (version, entry) in entries.items()
        if writable_entry(entry)
    ]


def entries_of(rows: Any) -> dict[str, tuple[str, Results]]:
    """The result entries of ``rows``, by name."""
    entries = _plain_entries(rows)
    if entries is not None:
        return entries
    entries = {}
    for name, version, entry in rows:
        values = dict(entry)  # JSON's keys are text; its numbers are floats but integers
        if not _NUMBERS.issuperset(map(type, values.values())):
            values = {str(k): None if v is None else float(v) for k, v in values.items()}
        entries[str(name)] = (str(version), values)
    return entries


def names_of(raw: Any) -> list[str]:
    """A list of names, as ``gone`` keeps them."""
    if type(raw) is not list or not set(map(type, raw)) <= {str}:
        raise TypeError("not a list of names")
    return raw


def seen_set(raw: Any) -> set[Seen]:
    """The kept versions, as ``seen_of`` gives them (an entry of any other shape or type
    matches no Trial's; one that cannot be hashed makes the list unreadable)."""
    if type(raw) is not list:
        raise TypeError("not a list of Trial versions")
    return set(map(tuple, raw))


def _plain_records(rows: Any) -> dict[str, tuple[str, TrialRecord]] | None:
    """The kept ledger records read in C-level passes when every row is plain, as ``record_rows``
    writes them (``[name, version, phase, key, assignments, metrics]``: text, text, a phase's
    text, a float or null, two lists): what the loop of ``records_of`` makes of them. ``None``
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


def _plain_entries(rows: Any) -> dict[str, tuple[str, Results]] | None:
    """The kept entries read in C-level passes when every row is plain, as ``entry_rows``
    writes them (``[name, version, entry]``: text, text, and an object of floats or nulls):
    what the loop of ``entries_of`` would make of them (a copy of each entry). ``None`` for any
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
