"""The peer's restart, Optuna's ``load_study`` and first ``ask`` on SQLite, for the embedded
benchmark: its own module, importing nothing of ours, so that a process running it
(``benchmarks.restart_process``) pays for Optuna's imports alone."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any


def optuna_space() -> dict[str, Any]:
    """The example's two parameters as Optuna's distributions."""
    from optuna.distributions import FloatDistribution

    return {"lr": FloatDistribution(0.01, 0.05), "momentum": FloatDistribution(0.5, 0.9)}


def optuna_study(n: int, root: Path) -> str:
    """An Optuna study on SQLite holding ``n`` completed trials (random values in the
    example's space); its storage URL."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    storage = f"sqlite:///{root / f'optuna-{n}.db'}"
    study = optuna.create_study(storage=storage, study_name="s", direction="minimize")
    draw = random.Random(1)
    study.add_trials(
        optuna.trial.create_trial(
            params={"lr": 0.01 + 0.04 * draw.random(), "momentum": 0.5 + 0.4 * draw.random()},
            distributions=optuna_space(),
            value=0.5,
        )
        for _ in range(n)
    )
    return storage


def optuna_resume(storage: str) -> None:
    """Optuna's restart: ``load_study`` and the first ``ask`` (random sampler, as the
    Experiment's ``random`` algorithm)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sampler = optuna.samplers.RandomSampler(seed=1)
    optuna.load_study(study_name="s", storage=storage, sampler=sampler).ask(optuna_space())
