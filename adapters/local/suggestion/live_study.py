"""The in-memory Optuna study an ``OptunaSearch`` keeps between calls, and its cheap rebuild.

Theory of operation. A running server tells the study only the results that are new and asks it
for the new assignments, so a call costs one model fit, not a pass over the history. Three things
in Optuna would still pass over the whole history on every call, and this module removes them:

- **Rebuild.** After a restart the study is rebuilt from the saved state. ``Study.add_trials``
  validates and deep-copies each trial (0.6 of 0.97 s at 5,000 trials); ``Storage.adopt`` takes
  the trials built for it as they are, in one pass, and sets the best trial once, as Optuna's
  ``create_new_trial`` and ``_update_cache`` would have trial by trial (the first of the best
  values wins). The resume property tests hold the rebuilt study to the uninterrupted one.
- **Results.** ``Study.tell`` returns a deep copy of the trial it was told; ``Live.tell``
  does what it does without it.
- **The search space.** Every ask gets a new, seeded sampler (``samplers.ask_seed``), and
  Optuna's samplers compute the "intersection search space" of the study's finished trials anew
  in each new sampler: one pass over every trial per ask. Here every trial of the study has the
  search's own distributions (they are asked with them, and rebuilt with them), so the
  intersection is known: those distributions once a trial is complete, else empty. ``KnownSpace``
  answers that in constant time and replaces the samplers' ``IntersectionSearchSpace``.

Both reach into Optuna's in-memory storage and samplers (``optuna<6`` is pinned for that and
for Katib's deprecated settings).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.storages import InMemoryStorage
from optuna.study import Study, StudyDirection
from optuna.study._tell import _tell_with_warning
from optuna.trial import FrozenTrial, TrialState

from katib_resume.adapters.local.suggestion.space import Point


class Storage(InMemoryStorage):
    """``InMemoryStorage`` that can adopt a rebuild's trials in bulk (see the module docstring)."""

    def adopt(self, study_id: int, trials: Sequence[FrozenTrial], maximize: bool) -> None:
        """Append ``trials`` (built for this study, referenced nowhere else) as they are."""
        with self._lock:
            self._check_study_id(study_id)
            info = self._studies[study_id]
            for trial in trials:
                self._max_trial_id += 1
                trial._trial_id = self._max_trial_id
                trial.number = len(info.trials)
                self._trial_id_to_study_id_and_number[trial._trial_id] = (study_id, trial.number)
                info.trials.append(trial)
            complete = [t for t in info.trials if t.state == TrialState.COMPLETE]
            if complete:
                pick = max if maximize else min  # both return the first of equal values
                info.best_trial_id = pick(complete, key=_value)._trial_id


def _value(trial: FrozenTrial) -> float:
    value = trial.value
    assert value is not None, "a complete trial has a value"
    return value


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
        self.storage = Storage()
        direction = StudyDirection.MAXIMIZE if maximize else StudyDirection.MINIMIZE
        self.study = optuna.create_study(storage=self.storage, sampler=sampler, direction=direction)
        self.study_id = self.study._study_id
        self.numbers: list[int | None] = []
        self.seen: set[Point] = set()
        self.completed = 0
        self.cursor: Any = None
        self.space = KnownSpace(self, distributions)

    def tell(self, number: int, value: float | None) -> None:
        """``Study.tell`` without the deep copy of the trial it returns (a rebuild from the
        history tells every result at once: the copies were nine tenths of it)."""
        if value is None:
            _tell_with_warning(self.study, number, None, TrialState.FAIL)
        else:
            _tell_with_warning(self.study, number, float(value))
            self.completed += 1

    def trial_id(self, number: int) -> int:
        return self.storage.get_trial_id_from_study_id_trial_number(self.study_id, number)

    def fit(self, sampler: BaseSampler) -> BaseSampler:
        """``sampler`` with the known search space in place of its own (for the samplers that
        keep one: TPE, CMA-ES)."""
        if isinstance(getattr(sampler, "_search_space", None), IntersectionSearchSpace):
            sampler._search_space = self.space  # type: ignore[attr-defined]
        return sampler
