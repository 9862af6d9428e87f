"""What each sampler reads of a study's past trials, so that a restart builds only those.

A restart rebuilds the in-memory study from the saved state (``OptunaSearch._rebuild``), and
building a trial for every assignment (its params read back from their texts, a ``FrozenTrial``)
was most of that work. What an ask reads of the past depends on the sampler, and for two of
them it does not grow with the history (Optuna 5's ``samplers/_qmc.py`` and ``_cmaes.py``):

- ``sobol`` (``QMCSampler``) takes its position in the sequence from a study system attribute
  (a counter, not a trial); the search space from the first complete trial (every trial here has
  the search's distributions, so any complete trial gives it) or, none complete, from the
  running ones; and whether any trial is complete (its independent fallback only counts them).
- ``cmaes`` (``CmaEsSampler``) unpickles its optimizer from the newest complete trial that
  carries one (``cma:optimizer:*``: the ask that told a generation stores the optimizer it made
  in its own trial) and tells it the complete trials of that optimizer's generation
  (``cma:generation``) once a population of them is there; it checks that one trial is
  complete. The intersection search space, which would read every trial, is ``KnownSpace``.
- ``tpe``, ``multivariate-tpe`` and ``bayesianoptimization`` fit every complete and running
  trial: only the failed ones are never read.

Every row keeps what the study itself needs besides: the running trials, which are told their
results later (and may then become what a sampler reads), and the best trial, which the
in-memory storage compares every newly told result with. A trial left out keeps its place in
the study as ``live_study.WITHHELD``, a failed trial no sampler here reads, so that the trial
numbers, the next trial's number and id, are those of the uninterrupted study.

The live study then serves every call until the next restart, so a row keeps what any later ask
may read, not only the first. For CMA-ES that is bounded: the trials completing later only
move the newest complete one carrying an optimizer towards the end, and the generation an
optimizer carries is one more than that of the trial it was restored from, so the generations
of the optimizers never decrease along the history. A later ask thus reads an optimizer of
generation ``g`` or above (``g`` that of the newest complete one now) and trials of such a
generation, all of them asked at or after the first ask that made an optimizer of generation
``g``, that is after the newest trial carrying one of a lower generation: scanning back from the
newest trial, ``cma_generation`` stops there.

The resume property tests hold the rows to the samplers: a study lacking a trial an ask reads
asks something else, and the resumed run then differs from the uninterrupted one
(``tests/property/test_sampler_reads.py`` runs CMA-ES and Sobol over several generations).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import compress, repeat
from operator import is_, is_not
from typing import Any

from optuna.samplers import CmaEsSampler

from katib_resume.adapters.local.suggestion.live_study import UNTOLD, Result


@dataclass(frozen=True, slots=True)
class Past:
    """The trials of a study about to be rebuilt, none built yet, by trial number: each one's
    result (``None``: failed; ``UNTOLD``: running), its system attributes (``attrs``), which
    trials may have any (``attributed``), the best trial and, if the caller has found them, the
    running trials (``None``: found here, from ``results``)."""

    results: Sequence[Result]
    attrs: Callable[[int], Mapping[str, Any]]
    attributed: range
    best: int | None
    running: Collection[int] | None = None


Reads = Callable[[Past], Sequence[int] | None]
"""The numbers of the trials to build, in order (``None``: every trial)."""


def needed(past: Past) -> list[int]:
    """What the study needs whatever its sampler: the running trials and the best one."""
    running: Iterable[int] | None = past.running
    if running is None:
        running = compress(range(len(past.results)), map(is_, past.results, repeat(UNTOLD)))
    return sorted({*running, *([] if past.best is None else [past.best])})


def scored(past: Past) -> Sequence[int] | None:
    """Every trial but the failed ones (``None``: none failed, so every trial)."""
    if None not in past.results:
        return None
    return list(compress(range(len(past.results)), map(is_not, past.results, repeat(None))))


def cma_generation(past: Past) -> list[int]:
    """``needed``, and the complete trials of the current generation or a later one (see the
    module docstring): the scan stops at the newest trial carrying an optimizer of a lower
    generation."""
    generation_key, optimizer_key = cma_keys()
    current: int | None = None  # the generation of the newest complete trial with an optimizer
    complete: list[tuple[int, int]] = []
    for number in reversed(past.attributed):
        attrs = past.attrs(number)
        generation = attrs.get(generation_key)
        if generation is None:
            continue
        carries = f"{optimizer_key}:0" in attrs
        if current is not None and carries and generation < current:
            break
        if past.results[number] is not None and past.results[number] is not UNTOLD:
            if current is None and carries:
                current = generation
            complete.append((number, generation))
    floor = current or 0
    return sorted({*needed(past), *(n for n, g in complete if g >= floor)})


@cache
def cma_keys() -> tuple[str, str]:
    """The names of CMA-ES's generation and optimizer attributes, read once from a sampler
    (making one takes a third of a millisecond, and a restart asked for one only for these):
    they depend on its ``use_separable_cma`` and ``with_margin``, which Katib's settings do not
    set (``samplers._cmaes``; a unit test holds them to the search's own sampler)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sampler: Any = CmaEsSampler(warn_independent_sampling=False)
    return sampler._attr_key_generation, sampler._attr_key_optimizer


READS: dict[str, Reads] = {
    "tpe": scored,
    "multivariate-tpe": scored,
    "bayesianoptimization": scored,
    "cmaes": cma_generation,
    "sobol": needed,
}
"""Per algorithm, the trials of the past its sampler reads (the module docstring says why)."""
