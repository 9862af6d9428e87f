"""The CMA-ES optimizers an Optuna search's cursor keeps: those a later ask may still restore.

CMA-ES stores the optimizer an ask made, pickled and in hex pieces (``cma:optimizer:0``,
``:1``, ...), in that ask's trial's system attributes, and an ask restores the optimizer of the
newest complete trial that carries one (``cma_trials``). With asks in parallel nearly every
trial carries one (each ask of a batch tells the same complete generation and stores the next),
some 3.4 kB a trial in two dimensions, and the cursor kept them all: 17 MB at 5,000 trials
grown in batches of 50 (``benchmarks/algorithms_grown.py``), which a restart read whole (86 ms)
and a compaction wrote whole.

No ask can restore an optimizer older than that of the newest complete trial carrying one: that
trial stays complete, so it or a newer one comes first in every ask's scan. So once a trial
carrying one is complete, the cursor keeps of every older carrier a *tombstone* only: its pieces
replaced by an empty ``cma:optimizer:0``. The key stays, so that a rebuild's scan for the
current generation stops where it stopped (``sampler_reads.cma_generation``), and its value is
never unpickled. The live study keeps its trials as they are: only what is saved changes, and a
study rebuilt from it asks what the live one asks (``tests/property/test_cma_optimizers.py``).

Nor does a rebuild read the attributes of the trials before the newest carrier of a lower
generation than that trial's: its scan stops there (``sampler_reads.cma_generation``), and the
trials before are never built but the running ones and the best, whose attributes no ask
reads (CMA-ES reads the newest complete carrier's optimizer and the generation of the trials
of its generation, none of which is older). So the cursor keeps no entry before that carrier:
what it keeps of the trials' attributes is bounded by the generations in flight, not by the
history. Such a change drops entries, which a journal record writes as the whole, small,
entry (``cursor_delta``).

``Pickled`` holds, for the search, what a draw needs of this: the cursor's entries that still
hold an optimizer (the newest complete carrier and those asked after it, as many as the asks
in parallel), the carriers a rebuild's scan may reach, and where the entries start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from katib_resume.adapters.local.suggestion.cma_trials import generation_of
from katib_resume.adapters.local.suggestion.column import UNTOLD_TEXT
from katib_resume.adapters.local.suggestion.live_study import UNTOLD, Result


def carries(attrs: Mapping[str, Any], key: str) -> bool:
    """Whether ``attrs`` hold an optimizer (``key``: CMA-ES's optimizer attribute), not its
    tombstone."""
    return bool(attrs.get(f"{key}:0"))


def carrier(attrs: Mapping[str, Any], key: str) -> bool:
    """Whether ``attrs`` are a carrier's: an optimizer's, or its tombstone's (where a
    rebuild's scan for the current generation may stop)."""
    return f"{key}:0" in attrs


def tombstone(attrs: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``attrs`` (not changed) without the optimizer's pieces but an empty first one."""
    prefix = f"{key}:"
    kept = {name: value for name, value in attrs.items() if not name.startswith(prefix)}
    kept[f"{prefix}0"] = ""
    return kept


class Pickled:
    """What the search knows of its cursor's CMA-ES attributes: the assignments whose entries
    hold an optimizer (by index, with their trial numbers); the carriers of the window, those
    a rebuild's scan may still reach (index and generation, in order); and ``first``, the
    first index the cursor keeps an entry for."""

    __slots__ = ("_carriers", "_held", "first")

    def __init__(
        self,
        held: dict[int, int] | None = None,
        carriers: list[tuple[int, int]] | None = None,
        first: int = 0,
    ) -> None:
        self._held = held or {}
        self._carriers = carriers or []
        self.first = first

    def add(self, index: int, number: int, generation: int) -> None:
        """Take the trial just asked for assignment ``index``, which carries an optimizer."""
        self._held[index] = number
        self._carriers.append((index, generation))

    def dead(self, carrier: int) -> list[int]:
        """The assignments to keep a tombstone of now that trial ``carrier`` is the newest
        complete one carrying an optimizer (forgotten here), in order."""
        dead = sorted(index for index, number in self._held.items() if number < carrier)
        for index in dead:
            del self._held[index]
        return dead

    def start(self, floor: int) -> int:
        """The first assignment whose entry a rebuild may read, now that ``floor`` is the
        generation of the newest complete carrier: the newest carrier of a lower generation,
        where the rebuild's scan stops (the carriers before it forgotten), else ``first``."""
        carriers = self._carriers
        for at in range(len(carriers) - 1, -1, -1):
            if carriers[at][1] < floor:
                del carriers[:at]
                return carriers[0][0]
        return self.first

    @classmethod
    def found(
        cls,
        attrs: Callable[[int], Mapping[str, Any]],
        results: Sequence[Result],
        attributed: range,
        index_of: Callable[[int], int],
        *,
        keys: tuple[str, str],
        first: int,
    ) -> Pickled:
        """Those of a study rebuilt from a cursor of this format, whose first entry is for
        assignment ``first``: found scanning back from the newest trial that may have
        attributes (``attributed``; ``attrs`` and ``results`` by trial number, ``index_of`` its
        assignment; ``keys`` CMA-ES's generation and optimizer attributes) to the carrier
        where a rebuild's scan stops, as ``sampler_reads.cma_generation`` does."""
        generation_key, key = keys
        held: dict[int, int] = {}
        carriers: list[tuple[int, int]] = []
        floor: int | None = None  # the generation of the newest complete carrier, once found
        for number in reversed(attributed):
            entry = attrs(number)
            if not carrier(entry, key):
                continue
            generation = generation_of(entry, generation_key)
            carriers.append((index_of(number), generation))
            if floor is not None and generation < floor:
                break
            if floor is None and carries(entry, key):
                held[index_of(number)] = number
                if results[number] is not None and results[number] is not UNTOLD:
                    floor = generation
        return cls(held, carriers[::-1], first)


def pruned(trial_attrs: dict[str, Any], told: list[Any], keys: tuple[str, str]) -> dict[str, Any]:
    """``trial_attrs`` (by assignment index text) with a tombstone for every carrier older than
    the newest complete one, and no entry before the newest carrier of a lower generation than
    that one's (``told``: the results column, ``told_column``), as a cursor of an earlier
    format is upgraded; the same dict if there is nothing to prune."""
    generation_key, key = keys
    carriers = sorted(int(i) for i, attrs in trial_attrs.items() if carrier(attrs, key))
    complete = [
        i
        for i in carriers
        if i < len(told) and _complete(told[i]) and carries(trial_attrs[str(i)], key)
    ]
    if not complete:
        return trial_attrs
    newest = complete[-1]
    floor = generation_of(trial_attrs[str(newest)], generation_key)
    lower = [i for i in carriers if generation_of(trial_attrs[str(i)], generation_key) < floor]
    start = lower[-1] if lower else 0
    dead = [i for i in carriers if start <= i < newest and carries(trial_attrs[str(i)], key)]
    if not dead and min(map(int, trial_attrs)) >= start:
        return trial_attrs
    kept = {i: attrs for i, attrs in trial_attrs.items() if int(i) >= start}
    for index in dead:
        kept[str(index)] = tombstone(kept[str(index)], key)
    return kept


def _complete(entry: Any) -> bool:
    """Whether a results column's entry is a result told (not a failure, not untold)."""
    return entry is not None and entry != UNTOLD_TEXT
