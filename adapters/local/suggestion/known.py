"""The finished Trials' results by assignment index, as an algorithm reads them, built lazily.

A call carries the result of every finished Trial of the Experiment, by Trial name, and an
algorithm's ``draw`` takes them by assignment index. Mapping all of them on every call (one
C-level pass, but over the whole history: about 0.3 ms a call at 3,000 results) is work most
algorithms never read: the random search reads no result, hyperband and PBT read the results
of one rung or one pool by index. ``Known`` answers a lookup by index from the assignment's own
name (``issued[i]["name"]``, checked against the name index, so a name issued twice counts at
its last index only, as the full mapping does), and builds the whole table only for a reader
that iterates, counts or compares it (no algorithm here does: the Optuna searches look up the
trials still running, ``OptunaSearch._tell``).

It is the mapping ``{names[n]: results[n] for n in results if n in names}`` restricted to the
indexes of ``issued``, in ``results``' order: ``tests/property/test_known_results.py`` holds every
way of reading it to that dict. The name index may grow after the view is made (the server adds
the new assignments' names), which is why indexes at or past ``len(issued)`` are left out.

It is where results enter the algorithms, so a value reads as ``nonfinite.admitted`` makes it
(NaN: failed), whichever way it is read.

The name index itself (``Names``) is mapped only when something reads it: a restart's first
call of an Optuna search whose every Trial was told reads no name (the map is 0.7 ms at 5,000
assignments), and the names of its new assignments need only not be taken, which the saved
bytes answer (``Names.__contains__``). A lookup by index needs to know only that no later
assignment has the same name (``Names.at``): the names from that index to the end are mapped,
so a restart's first call of hyperband, which reads the rung just before the one it issues,
maps that rung's names and those after it, not the history's. The names of assignments a store
holds as their texts (the embedded runtime's ``core.history.History``) are read as it answers
them (``History.names``), without decoding the assignments.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from katib_resume.adapters.local.suggestion import encoded
from katib_resume.adapters.local.suggestion.marks import name_in
from katib_resume.adapters.local.suggestion.nonfinite import admitted, has_nan
from katib_resume.core.history import names_of
from katib_resume.core.manifest import Manifest

Value = float | None
TAIL = 64
"""Names mapped at least, the first time ``Names.at`` maps the names from an index on."""
FINDS = 2
"""Names looked for in the saved bytes before the map is built: each may be a pass over them
(over those the snapshot's marks do not cover, or all of them to confirm a fingerprint found),
the map about two."""


class Names:
    """The index of ``issued``'s names (``{name: index}``, a name issued twice at its last
    index) and of the names added after them, mapped when first read (``mapping``). Until
    then, whether a name is taken is answered from the canonical bytes of ``issued`` a restart
    read (``encoded.kept``): an item named ``n`` writes ``{"name":<n>,"parameterAssignments":``,
    and a quote inside a string is escaped, so those bytes stand there only where an item has
    that name (a parameter's ``name`` is followed by ``"value"``). The snapshot's marks answer
    for the items they cover by a bisection, and the bytes after them are searched at C speed
    (``marks.name_in``: all of them, 0.15 ms at 5,000 assignments, for a snapshot without
    marks, where the map takes 0.7), ``FINDS`` times at most."""

    __slots__ = ("_finds", "_from", "_issued", "_map", "_pending", "_tail", "added")

    def __init__(self, issued: tuple[Manifest, ...]) -> None:
        self._issued = issued
        self._map: dict[str, int] | None = None
        self._pending: dict[str, int] = {}  # the names added before the map is built
        self._tail: dict[str, int] = {}  # the names of ``issued[_from:]``, at their last index
        self._from = len(issued)
        self._finds = 0
        self.added = 0
        """How many names were added after ``issued``'s (``Known`` tells growth by it)."""

    def mapping(self) -> dict[str, int]:
        """Every name by its index, mapped once, without a Python pass per item."""
        if self._map is None:
            issued = self._issued
            self._map = dict(zip(names_of(issued), range(len(issued)), strict=True))
            self._map.update(self._pending)
            self._pending, self._tail = {}, {}
        return self._map

    def at(self, name: str, index: int) -> bool:
        """``mapping().get(name) == index``, mapping only the names of ``issued`` from
        ``index`` on: a name added is at its own index, and a name of ``issued`` at its last
        one, which is ``index`` exactly when it is the name at ``index`` and at none after."""
        if self._map is not None:
            return self._map.get(name) == index
        if name in self._pending:
            return self._pending[name] == index
        if not 0 <= index < len(self._issued):
            return False
        if index < self._from:  # at least doubled each time: mapped once, amortized
            start = max(0, min(index, 2 * self._from - len(self._issued) - TAIL))
            issued = self._issued[start : self._from]
            tail = dict(zip(names_of(issued), range(start, self._from), strict=True))
            tail.update(self._tail)  # (a later index of a name first)
            self._tail, self._from = tail, start
        return self._tail.get(name) == index

    def __setitem__(self, name: str, index: int) -> None:
        (self._pending if self._map is None else self._map)[name] = index
        self.added += 1

    def __contains__(self, name: object) -> bool:
        if self._map is None and isinstance(name, str) and name not in self._pending:
            kept = encoded.kept(self._issued) if self._finds < FINDS else None
            if kept is not None:
                self._finds += 1
                return name_in(kept.body, kept.marks, encoded.canonical(name))
        return name in self._pending or name in self.mapping()


class Known(Mapping[int, Value]):
    __slots__ = ("_added", "_issued", "_names", "_results", "_table")

    def __init__(
        self, issued: tuple[Manifest, ...], names: Names, results: Mapping[str, Value]
    ) -> None:
        self._issued, self._names, self._results = issued, names, results
        self._added = names.added
        """How many names had been added to the index when the view was made (``_whole``)."""
        self._table: dict[int, Value] | None = None

    def __getitem__(self, index: int) -> Value:
        if self._table is not None or type(index) is not int:
            return self._whole()[index]
        if 0 <= index < len(self._issued):
            name = self._issued[index]["name"]
            if name in self._results and self._names.at(name, index):
                return admitted(self._results[name])
        raise KeyError(index)

    def __contains__(self, index: object) -> bool:
        try:
            self[index]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[int]:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())

    def keys(self) -> KeysView[int]:
        return self._whole().keys()

    def values(self) -> ValuesView[Value]:
        return self._whole().values()

    def items(self) -> ItemsView[int, Value]:
        return self._whole().items()

    def __eq__(self, other: object) -> bool:
        return self._whole() == (dict(other) if isinstance(other, Known) else other)

    __hash__ = None  # type: ignore[assignment]  # a mapping, as a dict is unhashable

    def __repr__(self) -> str:
        return f"Known({self._whole()!r})"

    def _whole(self) -> dict[int, Value]:
        """Every result by index, mapped once, in one C-level pass over the results."""
        if self._table is None:
            names = self._names.mapping()
            indexes = map(names.get, self._results)
            table: dict[Any, Value] = dict(zip(indexes, self._results.values(), strict=True))
            table.pop(None, None)
            grown = self._names.added != self._added  # names added since the view was made
            if grown or len(names) != len(self._issued):  # or a name issued twice
                limit = len(self._issued)
                table = {i: value for i, value in table.items() if i < limit}
            if has_nan(table.values()):
                table = {i: admitted(value) for i, value in table.items()}
            self._table = table
        return self._table
