"""The finished Trials' results by assignment index, as an algorithm reads them, built lazily.

A call carries the result of every finished Trial of the Experiment, by Trial name, and an
algorithm's ``draw`` takes them by assignment index. Mapping all of them on every call (one
C-level pass, but over the whole history: about 0.3 ms a call at 3,000 results) is work most
algorithms never read: the random search reads no result, hyperband and PBT read the results
of one rung or one pool by index. ``Known`` answers a lookup by index from the assignment's own
name (``issued[i]["name"]``, checked against the name index, so a name issued twice counts at
its last index only, as the full mapping does), and builds the whole table only for an
algorithm that iterates, counts or compares it (Optuna's searches, which tell every new result).

It is the mapping ``{names[n]: results[n] for n in results if n in names}`` restricted to the
indexes of ``issued``, in ``results``' order: ``tests/property/test_known_results.py`` holds every
way of reading it to that dict. The name index may grow after the view is made (the server adds
the new assignments' names), which is why indexes at or past ``len(issued)`` are left out.

It is where results enter the algorithms, so a value reads as ``nonfinite.admitted`` makes it
(NaN: failed), whichever way it is read.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from katib_resume.adapters.local.suggestion.nonfinite import admitted, has_nan
from katib_resume.core.kube import Manifest

Value = float | None


class Known(Mapping[int, Value]):
    __slots__ = ("_issued", "_named", "_names", "_results", "_table")

    def __init__(
        self, issued: tuple[Manifest, ...], names: Mapping[str, int], results: Mapping[str, Value]
    ) -> None:
        self._issued, self._names, self._results = issued, names, results
        self._named = len(names)
        """How many names the index held when the view was made (see ``_whole``)."""
        self._table: dict[int, Value] | None = None

    def __getitem__(self, index: int) -> Value:
        if self._table is not None or type(index) is not int:
            return self._whole()[index]
        if 0 <= index < len(self._issued):
            name = self._issued[index]["name"]
            if self._names.get(name) == index and name in self._results:
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
            indexes = map(self._names.get, self._results)
            table: dict[Any, Value] = dict(zip(indexes, self._results.values(), strict=True))
            table.pop(None, None)
            grown = len(self._names) != self._named  # names added since the view was made
            if grown or self._named != len(self._issued):  # or a name issued twice
                limit = len(self._issued)
                table = {i: value for i, value in table.items() if i < limit}
            if has_nan(table.values()):
                table = {i: admitted(value) for i, value in table.items()}
            self._table = table
        return self._table
