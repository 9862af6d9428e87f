"""The complete trials CMA-ES reads at an ask, kept as they complete rather than found in a pass.

Optuna's ``CmaEsSampler`` starts every ask with ``_get_trials``: every trial of the study
filtered by state (0.5 ms and more a call at 5,000 trials, growing with the history). Of that
list it reads only this (Optuna 5's ``samplers/_cmaes.py``):

- whether it holds at least ``n_startup_trials`` trials (1 here: Katib's settings do not set it);
- the newest trial in it that carries a pickled optimizer (``cma:optimizer:*``), whose
  optimizer has some generation ``g``;
- in order, those of its trials whose generation attribute (``cma:generation``) is ``g``.

So ``CmaTrials`` keeps, in trial-number order, the complete trials whose generation is at least
that of the newest complete trial carrying an optimizer (``floor``), and the newest complete
trial (so that the list is not empty while a trial is complete). That carrier's own generation
attribute is its optimizer's generation, so it is kept too, and a trial left out can never be
read again: the generations of the optimizers never decrease along the history
(``sampler_reads``), so a later ask reads an optimizer of generation ``floor`` or above, and
trials of that generation. Should a newer carrier still hold a lower generation, the trials
that generation needs may have been left out already: the list is then ``None`` from there on,
and the sampler makes its own pass as Optuna does.

A trial is added when it completes (``Live.tell``; a rebuild adds the complete trials it built,
which ``sampler_reads.cma_generation`` chose to be these). A finished trial is never updated
again, so the objects kept stay the storage's own.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping
from operator import attrgetter
from typing import Any

from optuna.trial import FrozenTrial

_NUMBER = attrgetter("number")


class CmaTrials:
    """The complete trials a CMA-ES ask reads (see the module docstring)."""

    __slots__ = ("_carrier", "_generation_key", "_kept", "_newest", "_optimizer_key", "floor")

    def __init__(self, generation_key: str, optimizer_key: str) -> None:
        self._generation_key, self._optimizer_key = generation_key, f"{optimizer_key}:0"
        self._kept: list[FrozenTrial] | None = []
        self._newest: FrozenTrial | None = None  # the newest complete trial
        self._carrier = -1  # the number of the newest complete trial carrying an optimizer
        self.floor = -1  # that optimizer's generation (-1: none yet)

    def completed(self, trial: FrozenTrial) -> None:
        """Take ``trial``, which has just completed (or was rebuilt complete)."""
        kept = self._kept
        if kept is None:
            return
        if self._newest is None or trial.number > self._newest.number:
            self._newest = trial
        generation = self._generation(trial)
        if self._optimizer_key in trial.system_attrs and trial.number > self._carrier:
            self._carrier = trial.number
            if generation < self.floor:  # the generations went back: keep nothing more
                self._kept = None
                return
            if generation > self.floor:
                self.floor = generation
                self._kept = kept = [t for t in kept if self._generation(t) >= generation]
        if generation >= 0 and generation >= self.floor:
            insort(kept, trial, key=_NUMBER)

    @property
    def carrier(self) -> int:
        """The number of the newest complete trial carrying an optimizer (-1: none)."""
        return self._carrier

    def trials(self) -> list[FrozenTrial] | None:
        """What ``CmaEsSampler`` reads of the study's complete trials, in order (``None``:
        not known, make the pass)."""
        kept = self._kept
        if kept is None or kept or self._newest is None:
            return kept
        return [self._newest]

    def _generation(self, trial: FrozenTrial) -> int:
        return generation_of(trial.system_attrs, self._generation_key)


def generation_of(attrs: Mapping[str, Any], key: str) -> int:
    """The generation attribute ``key`` of a trial's system attributes (-1: none, a trial no
    CMA-ES ask made)."""
    generation = attrs.get(key)
    return -1 if generation is None else int(generation)
