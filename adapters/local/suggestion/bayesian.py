"""``bayesianoptimization``: scikit-optimize's method, as an Optuna sampler on scikit-learn.

Katib's service ran ``skopt.Optimizer``, itself a thin layer over scikit-learn's regressors;
scikit-optimize is no longer maintained, and Optuna's own ``GPSampler`` needs PyTorch (a
download of gigabytes for one algorithm), so this sampler does what ``skopt.Optimizer`` did with
scikit-learn directly, under Katib's settings:

- ``n_initial_points`` (10) assignments are random, then every ask fits ``base_estimator`` to
  the results: ``GP`` (a Gaussian process: a Matern 5/2 kernel times a constant plus white
  noise, as skopt's default, with one length scale over the unit cube, which fits in a tenth
  of the time of one per dimension), ``RF`` or ``ET`` (random or extra trees; the spread of
  the trees is the uncertainty), ``GBRT`` (gradient boosting at the 16th, 50th and 84th
  percentiles);
- the next point maximises ``acq_func`` over candidates drawn from the ask's generator
  (``acq_optimizer``: skopt's ``sampling``; ``lbfgs`` and ``auto`` sample too): ``EI``,
  ``PI`` or ``LCB``; ``gp_hedge`` picks one of the three per ask at random (skopt weighs them
  by past gains: that needs state beyond the results, which this service does not keep), and
  ``EIps``/``PIps`` (per second) act as ``EI``/``PI``, as Trial durations are not known here;
- Trials still running count as the worst result so far (a "constant liar"), so the items of one
  batch spread out instead of repeating the last suggestion (Katib's #1700, #2002);
- at most ``MAX_FIT`` results are fitted (the best half and the most recent half), so an ask
  costs the same at 5,000 results as at 200;
- a result of ±inf (``nonfinite``: a value, the best or the worst) is fitted as the best or the
  worst finite one, as Optuna's ``GPSampler`` does (``warn_and_convert_inf``): a regressor
  cannot fit an infinity (scikit-learn refuses it), and a rank is what it means.

Parameters are searched in Optuna's unit encoding (log scales as logs, categorical one-hot), so
the search space mapping is the one of the other Optuna-backed algorithms.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from optuna._transform import _SearchSpaceTransform
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState
from scipy.stats import norm

MAX_FIT = 300
CANDIDATES = 2000
Model = Any


class BayesianSampler(BaseSampler):
    def __init__(self, space: dict[str, BaseDistribution], settings: dict[str, Any], seed: int):
        self.space, self.settings = space, settings
        self.rng = np.random.RandomState(seed)
        self.independent = RandomSampler(seed=seed)

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return self.space

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if not search_space or len(done) < int(self.settings["n_initial_points"]) or not done:
            return {}
        transform = _SearchSpaceTransform(search_space, transform_0_1=True)
        x, y = self._data(study, transform, done)
        model = _fit(str(self.settings["base_estimator"]), x, y, self.rng)
        candidates = self.rng.uniform(0.0, 1.0, size=(CANDIDATES, x.shape[1]))
        mean, std = _predict(model, candidates)
        score = _acquisition(self._acquisition_name(), mean, std, float(np.min(y)))
        return transform.untransform(candidates[int(np.argmax(score))])

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        return self.independent.sample_independent(study, trial, param_name, param_distribution)

    def _data(
        self, study: Study, transform: _SearchSpaceTransform, done: list[FrozenTrial]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The fitted points and their losses (lower is better), running ones as the worst."""
        sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
        chosen = _chosen(done, sign)
        running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        running = [t for t in running if set(t.params) >= set(self.space)][-MAX_FIT // 10 :]
        x = [transform.transform(t.params) for t in (*chosen, *running)]
        losses = _clipped([sign * float(t.value) for t in chosen if t.value is not None])
        worst = max(losses)
        return np.asarray(x), np.asarray(losses + [worst] * len(running))

    def _acquisition_name(self) -> str:
        name = str(self.settings["acq_func"]).removesuffix("ps")
        if name == "gp_hedge":
            return ("EI", "PI", "LCB")[int(self.rng.randint(3))]
        return name


def _clipped(losses: list[float]) -> list[float]:
    """The losses, each infinity as the finite extreme on its side (all infinite: 0.0)."""
    finite = [v for v in losses if math.isfinite(v)]
    if len(finite) == len(losses):
        return losses
    low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
    return [min(max(v, low), high) for v in losses]


def _chosen(done: list[FrozenTrial], sign: float) -> list[FrozenTrial]:
    """All results, or the best half and the most recent half of ``MAX_FIT``."""
    if len(done) <= MAX_FIT:
        return done
    best = sorted(done, key=lambda t: sign * float(t.value or 0.0))[: MAX_FIT // 2]
    taken = {t.number for t in best}
    recent = [t for t in done[::-1] if t.number not in taken][: MAX_FIT - len(best)]
    return sorted(best + recent, key=lambda t: t.number)


def _fit(estimator: str, x: np.ndarray, y: np.ndarray, rng: np.random.RandomState) -> Model:
    from sklearn.ensemble import (
        ExtraTreesRegressor,
        GradientBoostingRegressor,
        RandomForestRegressor,
    )
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

    seed = int(rng.randint(2**31 - 1))
    if estimator == "GP":
        kernel = ConstantKernel(1.0) * Matern(1.0, nu=2.5) + WhiteKernel(1e-5)
        model: Model = GaussianProcessRegressor(kernel, normalize_y=True, random_state=seed)
    elif estimator in ("RF", "ET"):
        kind = RandomForestRegressor if estimator == "RF" else ExtraTreesRegressor
        model = kind(n_estimators=100, min_samples_leaf=3, random_state=seed)
    else:
        quantiles = (0.16, 0.5, 0.84)
        models = [
            GradientBoostingRegressor(loss="quantile", alpha=q, random_state=seed)
            for q in quantiles
        ]
        return [m.fit(x, y) for m in models]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kernel bounds reached on tiny data sets
        return model.fit(x, y)


def _predict(model: Model, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(model, list):
        low, mid, high = (m.predict(x) for m in model)
        return mid, np.maximum((high - low) / 2, 1e-9)
    if hasattr(model, "estimators_"):
        per_tree = np.stack([tree.predict(x) for tree in model.estimators_])
        return per_tree.mean(axis=0), np.maximum(per_tree.std(axis=0), 1e-9)
    mean, std = model.predict(x, return_std=True)
    return mean, np.maximum(std, 1e-9)


def _acquisition(name: str, mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
    """Higher is better, for losses (skopt's ``xi=0.01``, ``kappa=1.96``)."""
    if name == "LCB":
        return -(mean - 1.96 * std)
    improvement = best - mean - 0.01
    z = improvement / std
    if name == "PI":
        return np.asarray(norm.cdf(z))
    return np.asarray(improvement * norm.cdf(z) + std * norm.pdf(z))
