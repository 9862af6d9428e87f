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

``Pickled`` holds, for the search, the cursor's entries that still hold an optimizer: the
newest complete carrier and those asked after it, as many as the asks in parallel.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from katib_resume.adapters.local.suggestion.live_study import UNTOLD, Result
from katib_resume.adapters.local.suggestion.told_column import UNTOLD_TEXT


def carries(attrs: Mapping[str, Any], key: str) -> bool:
    """Whether ``attrs`` hold an optimizer (``key``: CMA-ES's optimizer attribute), not its
    tombstone."""
    return bool(attrs.get(f"{key}:0"))


def tombstone(attrs: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``attrs`` (not changed) without the optimizer's pieces but an empty first one."""
    prefix = f"{key}:"
    kept = {name: value for name, value in attrs.items() if not name.startswith(prefix)}
    kept[f"{prefix}0"] = ""
    return kept


class Pickled:
    """The assignments whose cursor entries hold an optimizer, with their trial numbers."""

    __slots__ = ("_held",)

    def __init__(self, held: dict[int, int] | None = None) -> None:
        self._held = held or {}

    def add(self, index: int, number: int) -> None:
        self._held[index] = number

    def dead(self, carrier: int) -> list[int]:
        """The assignments to keep a tombstone of now that trial ``carrier`` is the newest
        complete one carrying an optimizer (forgotten here), in order."""
        dead = sorted(index for index, number in self._held.items() if number < carrier)
        for index in dead:
            del self._held[index]
        return dead

    @classmethod
    def found(
        cls,
        attrs: Callable[[int], Mapping[str, Any]],
        results: Sequence[Result],
        attributed: range,
        index_of: Callable[[int], int],
        key: str,
    ) -> Pickled:
        """Those of a study rebuilt from a cursor of this format: its trials carrying an
        optimizer from the newest complete one on, found scanning back from the newest trial
        that may have attributes (``attributed``; ``attrs`` and ``results`` by trial number,
        ``index_of`` its assignment)."""
        held: dict[int, int] = {}
        for number in reversed(attributed):
            if carries(attrs(number), key):
                held[index_of(number)] = number
                if results[number] is not None and results[number] is not UNTOLD:
                    break
        return cls(held)


def pruned(trial_attrs: dict[str, Any], told: list[Any], key: str) -> dict[str, Any]:
    """``trial_attrs`` (by assignment index text) with a tombstone for every carrier older than
    the newest complete one (``told``: the results column, ``told_column``), as a cursor of an
    earlier format is upgraded; the same dict if there is none."""
    carriers = sorted(int(index) for index, attrs in trial_attrs.items() if carries(attrs, key))
    complete = [i for i in carriers if i < len(told) and _complete(told[i])]
    if not complete:
        return trial_attrs
    dead = [i for i in carriers if i < complete[-1]]
    if not dead:
        return trial_attrs
    kept = dict(trial_attrs)
    for index in dead:
        kept[str(index)] = tombstone(kept[str(index)], key)
    return kept


def _complete(entry: Any) -> bool:
    """Whether a results column's entry is a result told (not a failure, not untold)."""
    return entry is not None and entry != UNTOLD_TEXT
