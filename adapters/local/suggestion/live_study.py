"""The in-memory Optuna study an ``OptunaSearch`` keeps between calls, and its cheap rebuild.

Theory of operation. A running server tells the study only the results that are new and asks it
for the new assignments, so a call costs one model fit, not a pass over the history. Four things
in Optuna would still pass over the whole history on every call, and this module removes them:

- **Rebuild.** After a restart the study is rebuilt from the saved state. ``Study.add_trials``
  validates and deep-copies each trial (0.6 of 0.97 s at 5,000 trials); ``Live.load`` builds the
  trials a column at a time (states, values, one ``map`` of ``FrozenTrial``: no Python call per
  trial but its constructor) for the places ``Storage.places`` gives, and ``Storage.adopt``
  takes them as they are and sets the best trial once, as Optuna's ``create_new_trial`` and
  ``_update_cache`` would have trial by trial (the first of the best values wins). The resume
  property tests hold the rebuilt study to the uninterrupted one. Only the trials its sampler
  reads are built (``sampler_reads``: for CMA-ES and Sobol a bounded few); each of the others
  keeps its place as ``WITHHELD``, so the trial numbers are the uninterrupted study's.
- **Results.** ``Study.tell`` returns a deep copy of the trial it was told; ``Live.tell``
  does what it does without it.
- **The search space.** Every ask gets a new, seeded sampler (``samplers.ask_seed``), and
  Optuna's samplers compute the "intersection search space" of the study's finished trials anew
  in each new sampler: one pass over every trial per ask. Here every trial of the study has the
  search's own distributions (they are asked with them, and rebuilt with them), so the
  intersection is known: those distributions once a trial is complete, else empty. ``KnownSpace``
  answers that in constant time and replaces the samplers' ``IntersectionSearchSpace``; Sobol's
  sampler, which infers its space at each ask from its first complete trial, filtering every
  trial by state to find it (0.15 ms a call at 5,000), is told it (``qmc_space``, through
  ``samplers.KnownQMC``).
- **CMA-ES's complete trials.** Its ask starts by filtering every trial of the study by state
  (0.5 ms and more a call at 5,000), to read the newest optimizer and its generation's trials.
  ``cma_trials.CmaTrials`` keeps those as trials complete, and ``samplers.KnownCmaEs`` reads
  them instead.

All of this reaches into Optuna's in-memory storage and samplers (``optuna<6`` is pinned for
that and for Katib's deprecated settings).
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Sequence
from datetime import datetime
from itertools import repeat
from typing import TYPE_CHECKING, Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.storages import InMemoryStorage
from optuna.study import Study, StudyDirection
from optuna.study._tell import _tell_with_warning
from optuna.trial import FrozenTrial, TrialState

from katib_resume.adapters.local.suggestion.cma_trials import CmaTrials
from katib_resume.adapters.local.suggestion.points import Seen
from katib_resume.adapters.local.suggestion.samplers import KnownCmaEs, KnownQMC
from katib_resume.adapters.local.suggestion.space import Point
from katib_resume.adapters.local.suggestion.trial_numbers import Numbers

if TYPE_CHECKING:  # (it reads ``UNTOLD`` from here)
    from katib_resume.adapters.local.suggestion.cma_optimizers import Pickled


class _Untold(enum.Enum):
    UNTOLD = "untold"


UNTOLD = _Untold.UNTOLD
"""The result of an assignment not told yet (its trial is running)."""
Result = float | _Untold | None
"""A trial's result in a rebuild: its value, ``None`` (failed) or ``UNTOLD`` (running)."""


class Storage(InMemoryStorage):
    """``InMemoryStorage`` that can adopt a rebuild's trials in bulk (see the module docstring)."""

    def places(self, study_id: int, count: int) -> tuple[range, range]:
        """The numbers and the trial ids the study's next ``count`` trials get."""
        first, last_id = len(self._studies[study_id].trials), self._max_trial_id
        return range(first, first + count), range(last_id + 1, last_id + 1 + count)

    def adopt(
        self, study_id: int, trials: Sequence[FrozenTrial], built: Sequence[int], best: int | None
    ) -> None:
        """Append ``trials`` as they are: ``trials[i]`` for ``i`` in ``built`` made for the
        place it takes (``places``), referenced nowhere else, the others ``WITHHELD`` (whose
        ids are never looked up: no trial has them); ``trials[best]`` is the study's best
        trial (``None``: none complete). None is waiting, so the next ask's scan for waiting
        trials starts after them."""
        with self._lock:
            self._check_study_id(study_id)
            numbers, ids = self.places(study_id, len(trials))
            for place in (*built[:1], *built[-1:]):
                trial = trials[place]
                assert (trial.number, trial._trial_id) == (numbers[place], ids[place]), "placed"
            where = zip(repeat(study_id), map(numbers.__getitem__, built))
            places = zip(map(ids.__getitem__, built), where, strict=True)
            self._trial_id_to_study_id_and_number.update(places)
            info = self._studies[study_id]
            info.trials.extend(trials)
            self._max_trial_id += len(trials)
            self._prev_waiting_trial_number[study_id] = len(info.trials)
            if best is not None:
                assert trials[best] is not WITHHELD, "the best trial is built"
                info.best_trial_id = trials[best]._trial_id


class KnownSpace(IntersectionSearchSpace):
    """The intersection search space of a study whose trials all have ``distributions``."""

    def __init__(self, live: Live, distributions: dict[str, BaseDistribution]) -> None:
        super().__init__(include_pruned=True)
        self.live = live
        self.known = dict(sorted(distributions.items()))

    def calculate(self, study: Study, use_cache: bool = False) -> dict[str, BaseDistribution]:
        return copy.deepcopy(self.known) if self.live.completed else {}


class Live:
    """The study matching one cursor and one issued count (so a call reuses it).

    ``numbers[i]`` is the study's trial number of assignment ``i`` (``None``: not a point of
    the space, so not in the study); ``seen`` the points issued so far; ``completed`` how many
    trials are complete.
    """

    def __init__(
        self, maximize: bool, distributions: dict[str, BaseDistribution], sampler: BaseSampler
    ) -> None:
        self.storage, self.maximize = Storage(), maximize
        direction = StudyDirection.MAXIMIZE if maximize else StudyDirection.MINIMIZE
        self.study = optuna.create_study(storage=self.storage, sampler=sampler, direction=direction)
        self.study_id = self.study._study_id
        self.numbers = Numbers()
        self.untold: set[int] = set()  # the assignments that are trials not told a result yet
        self.seen: set[Point] | Seen = set()
        self.completed = 0
        self.cursor: Any = None
        self.distributions = distributions
        self.space = KnownSpace(self, distributions)
        self.cma: CmaTrials | None = None  # kept for a CMA-ES search, before ``load``
        self.pickled: Pickled | None = None  # the same (``cma_optimizers``)

    def load(
        self,
        results: Sequence[Result],
        built: Sequence[int],
        params: Sequence[dict[str, Any]],
        attrs: Sequence[dict[str, Any]],
        best: int | None,
        *,
        complete: int | None = None,
    ) -> None:
        """Add a trial per assignment, of ``results`` (``None``: failed; ``UNTOLD``: running),
        building the ``built`` ones (the trials the sampler reads, in order), of ``params`` and
        system attributes ``attrs`` (one each), as ``create_trial`` makes them, the
        distributions shared (never mutated); the others are ``WITHHELD``; ``best`` is
        ``best_of(results)`` and ``complete`` (if given) ``count_complete(results)``, which
        the caller has found already. Built a column at
        a time, without a Python call per trial but ``FrozenTrial``'s own."""
        now = datetime.now()
        told = results if len(built) == len(results) else list(map(results.__getitem__, built))
        states = list(map(_STATES.get, map(type, told), repeat(COMPLETE)))
        if states.count(COMPLETE) == len(states):
            values: list[float | None] = list(map(float, told))  # type: ignore[arg-type]
        else:
            values = [float(r) if isinstance(r, int | float) else None for r in told]
        numbers, ids = self.storage.places(self.study_id, len(results))
        made = map(
            FrozenTrial,
            map(numbers.__getitem__, built),
            states,
            values,
            repeat(now),
            map(_UNFINISHED.get, states, repeat(now)),
            params,
            repeat(self.distributions),
            iter(dict, None),
            attrs,
            iter(dict, None),
            map(ids.__getitem__, built),
        )
        if len(built) == len(results):
            trials = list(made)
        else:
            trials = [WITHHELD] * len(results)
            for number, trial in zip(built, made, strict=True):
                trials[number] = trial
        self.storage.adopt(self.study_id, trials, built, best)
        self.completed += count_complete(results) if complete is None else complete
        if self.cma is not None:
            for number, state in zip(built, states, strict=True):
                if state is COMPLETE:
                    self.cma.completed(trials[number])

    def tell(self, number: int, value: float | None) -> None:
        """``Study.tell`` without the deep copy of the trial it returns (a rebuild from the
        history tells every result at once: the copies were nine tenths of it)."""
        if value is None:
            _tell_with_warning(self.study, number, None, TrialState.FAIL)
        else:
            _tell_with_warning(self.study, number, float(value))
            self.completed += 1
            if self.cma is not None:
                self.cma.completed(self.storage.get_trial(self.trial_id(number)))

    def trial_id(self, number: int) -> int:
        return self.storage.get_trial_id_from_study_id_trial_number(self.study_id, number)

    def fit(self, sampler: BaseSampler) -> BaseSampler:
        """``sampler`` with the known search space in place of its own (for the samplers that
        keep one: TPE, CMA-ES; Sobol's infers one at each ask)."""
        if isinstance(getattr(sampler, "_search_space", None), IntersectionSearchSpace):
            sampler._search_space = self.space  # type: ignore[attr-defined]
        if isinstance(sampler, KnownQMC):
            sampler.known = self.qmc_space
        if isinstance(sampler, KnownCmaEs) and self.cma is not None:
            sampler.complete = self.cma.trials
        return sampler

    def qmc_space(self) -> dict[str, BaseDistribution]:
        """What ``QMCSampler.infer_relative_search_space`` finds in this study, in constant
        time: the distributions of its first complete trial or, none complete, those of its
        running ones, but the trial being asked (which has none yet). Every trial here has
        ``distributions``, so that is them once one is complete or another is running."""
        return dict(self.distributions) if self.completed or self.untold else {}


def best_of(results: Sequence[Result], maximize: bool) -> int | None:
    """The number of the best complete trial, the first of equals (``None``: none complete)."""
    scores = [r for r in results if r is not None and r is not UNTOLD]
    if not scores:
        return None
    return results.index(max(scores) if maximize else min(scores))


def count_complete(results: Sequence[Result]) -> int:
    return len(results) - results.count(None) - results.count(UNTOLD)


COMPLETE, RUNNING = TrialState.COMPLETE, TrialState.RUNNING
_STATES: dict[type, TrialState] = {_Untold: RUNNING, type(None): TrialState.FAIL}
"""A result's trial state, by its type (any other: a value, so ``COMPLETE``)."""
_UNFINISHED: dict[TrialState, None] = {RUNNING: None}
"""The completion time of a trial in that state: none (any other: the rebuild's time)."""
WITHHELD = FrozenTrial(-1, TrialState.FAIL, None, None, None, {}, {}, {}, {}, {}, -1)
"""The trial in the place of one the sampler does not read (``sampler_reads``): a failed trial,
the state none of the samplers here reads, shared by every such place and never updated (a
told result is always a running trial's, and running trials are always built)."""
