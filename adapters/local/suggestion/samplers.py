"""Which Optuna sampler each algorithm name asks with, built from Katib's settings.

Every ask gets a sampler of its own, seeded by ``(search seed, index of the assignment)``
(``ask_seed``): the ``k``-th assignment then depends on the search's seed and on the study it
sees (the earlier assignments and the results known), never on how many random numbers earlier
asks happened to draw. That is what makes a search rebuilt from the trial history continue as
the uninterrupted one would, and a sampler's generator is never part of the saved state.

The samplers:

- ``tpe``: ``TPESampler`` with hyperopt's meaning of the settings Katib's hyperopt service
  reads: ``gamma`` splits the ``ceil(gamma * sqrt(n))`` best results (at most 25) from the
  rest, ``n_EI_candidates`` candidates are scored, ``prior_weight`` weighs the prior, and the
  first 10 assignments are random (Optuna's default; hyperopt's 20 would leave the usual
  Katib Experiment of a dozen Trials random throughout). Each parameter is modelled on its
  own, as hyperopt does (``multivariate=False``: Optuna 5's default is multivariate).
  ``constant_liar`` makes the sampler treat Trials still running as bad, so the items of one
  batch differ.
- ``multivariate-tpe``: ``TPESampler(multivariate=True)``, Optuna's defaults (10 startup
  trials, 24 candidates), ``constant_liar`` as above.
- ``cmaes``: ``CmaEsSampler`` with ``sigma0`` (``sigma``, used when > 0, as Goptuna does) and
  ``restart_strategy`` (``ipop``, ``bipop`` or none). Categorical parameters, which CMA-ES does
  not model, are drawn by a seeded random sampler (Goptuna's were not reproducible).
- ``bayesianoptimization``: ``bayesian.BayesianSampler`` (scikit-optimize's method on
  scikit-learn).
- ``sobol``: ``QMCSampler(qmc_type="sobol", scramble=True)``; the scrambling is seeded by the
  search's seed (the same for every ask: it defines the sequence) and the first point, which
  Optuna draws before it knows the space, by the ask's seed.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from optuna.distributions import BaseDistribution
from optuna.exceptions import ExperimentalWarning
from optuna.samplers import BaseSampler, CmaEsSampler, QMCSampler, RandomSampler, TPESampler
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

Space = dict[str, BaseDistribution]
SamplerFactory = Callable[[int], BaseSampler]
"""A sampler for one ask, from that ask's seed."""

TPE_STARTUP = 10
HYPEROPT_LINEAR_FORGETTING = 25


def ask_seed(seed: int, index: int) -> int:
    """The seed of the ``index``-th ask (SHA-256, so neighbouring asks are unrelated)."""
    digest = hashlib.sha256(f"{seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def factory(algorithm: str, settings: dict[str, Any], seed: int, space: Space) -> SamplerFactory:
    """The per-ask sampler of ``algorithm`` (one of ``FACTORIES``) on ``space``."""
    return FACTORIES[algorithm](settings, seed, space)


def _tpe(settings: dict[str, Any], _: int, __: Space) -> SamplerFactory:
    gamma_ = float(settings["gamma"])

    def gamma(n: int) -> int:
        return min(math.ceil(gamma_ * math.sqrt(n)), HYPEROPT_LINEAR_FORGETTING)

    extra: dict[str, Any] = {}
    if settings["prior_weight"] != 1.0:  # deprecated in Optuna 4.9: passed only when set
        extra["prior_weight"] = float(settings["prior_weight"])
    return lambda s: _quietly(
        TPESampler,
        n_startup_trials=TPE_STARTUP,
        n_ei_candidates=int(settings["n_EI_candidates"]),
        gamma=gamma,
        seed=s,
        multivariate=False,
        constant_liar=True,
        **extra,
    )


def _multivariate_tpe(settings: dict[str, Any], _: int, __: Space) -> SamplerFactory:
    return lambda s: _quietly(
        TPESampler,
        n_startup_trials=int(settings["n_startup_trials"]),
        n_ei_candidates=int(settings["n_ei_candidates"]),
        seed=s,
        multivariate=True,
        constant_liar=True,
    )


def _cmaes(settings: dict[str, Any], _: int, __: Space) -> SamplerFactory:
    sigma = float(settings["sigma"])
    restart = settings["restart_strategy"]
    return lambda s: _quietly(
        KnownCmaEs,
        sigma0=sigma if sigma > 0 else None,
        seed=s,
        restart_strategy=restart,
        independent_sampler=RandomSampler(seed=s),
        warn_independent_sampling=False,
    )


def _sobol(_: dict[str, Any], seed: int, __: Space) -> SamplerFactory:
    return lambda s: _quietly(
        KnownQMC,
        qmc_type="sobol",
        scramble=True,
        seed=seed % 2**32,
        independent_sampler=RandomSampler(seed=s),
        warn_independent_sampling=False,
        warn_asynchronous_seeding=False,
    )


def _bayesian(settings: dict[str, Any], _: int, space: Space) -> SamplerFactory:
    # Imported here: SciPy's ``stats`` (for ``norm``) takes about half a second to import, and
    # only this algorithm uses it; every other command and algorithm starts without it.
    from katib_resume.adapters.local.suggestion.bayesian import BayesianSampler

    return lambda s: BayesianSampler(space, settings, s)


FACTORIES: dict[str, Callable[[dict[str, Any], int, Space], SamplerFactory]] = {
    "tpe": _tpe,
    "multivariate-tpe": _multivariate_tpe,
    "cmaes": _cmaes,
    "sobol": _sobol,
    "bayesianoptimization": _bayesian,
}


def _quietly(make: Callable[..., BaseSampler], **options: Any) -> BaseSampler:
    """A sampler built without Optuna's experimental and deprecation warnings (the options
    they are about are Katib's settings, and ``optuna<6`` keeps them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return make(**options)


class KnownQMC(QMCSampler):
    """``QMCSampler`` told its study's search space (``known``, set by ``Live.fit``) instead of
    finding it at each ask in a pass over every trial of the study (Optuna's
    ``infer_relative_search_space`` filters them all by state: 0.15 ms a call at 5,000)."""

    known: Callable[[], Space] | None = None

    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> Space:
        known = self.known
        return super().infer_relative_search_space(study, trial) if known is None else known()

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        """The independent sampler's draw, without ``QMCSampler``'s count of the complete
        trials, another pass over every trial, made only to warn (ours never warns)."""
        return self._independent_sampler.sample_independent(
            study, trial, param_name, param_distribution
        )


class KnownCmaEs(CmaEsSampler):
    """``CmaEsSampler`` handed the complete trials it reads (``complete``, set by ``Live.fit``:
    ``cma_trials``) instead of finding them at each ask in a pass over every trial."""

    complete: Callable[[], list[FrozenTrial] | None] | None = None

    def _get_trials(self, study: Study) -> list[FrozenTrial]:
        kept = None if self.complete is None or self._n_startup_trials > 1 else self.complete()
        return super()._get_trials(study) if kept is None else kept


class Idle(BaseSampler):
    """``Delegate``'s sampler before its first ask: a result told then (a restart tells the
    results that came while it was down before it asks) reaches ``after_trial``, a no-op here
    as in ``RandomSampler``, the placeholder this replaces, whose seeded generator (a tenth of
    a millisecond) was drawn at every rebuild and never used. It is never asked."""

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        raise RuntimeError("no ask is under way")

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        raise RuntimeError("no ask is under way")

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        raise RuntimeError("no ask is under way")


IDLE = Idle()


class Delegate(BaseSampler):
    """The study's sampler: hands every call to ``current``, the sampler of the ask under way
    (a study's sampler is fixed when it is created; ours changes at every ask)."""

    def __init__(self) -> None:
        self.current: BaseSampler = IDLE

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return self.current.infer_relative_search_space(study, trial)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExperimentalWarning)
            return self.current.sample_relative(study, trial, search_space)

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        return self.current.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self.current.before_trial(study, trial)

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        self.current.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        self.current.reseed_rng()
