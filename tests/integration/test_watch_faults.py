"""Lost watch events, in the whole fake world: the controller's cache is repaired from the API
server, and the Experiment ends as it would have without the fault.

Issue 15's three scenarios. A watch that drops an event says nothing about it: the cache keeps
the old object and, with nothing left to wake the controller up, no resync of that cache can
notice. Each scenario is played twice: with the relist switched off (``NEVER``) it shows the
damage the lost event does; with the runtime's periodic relist it heals within a period.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from katib_resume.app.embedded.runtime import RELIST_SECONDS
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from tests.support.sim import CHILD, NAME, NAMESPACE, Sim

NEVER = 1e9
"""A relist period no test reaches: the cache is never listed again."""
REPAIRED_WITHIN = int(RELIST_SECONDS) + 10
"""Steps (one simulated second each) a repair may take: a relist period, and a few reconciles."""


def _cached(sim: Sim, kind: str, name: str, api: str = API_VERSION) -> object:
    namespace = None if kind == "PersistentVolume" else NAMESPACE
    return sim.runtime.informer.objects.get(api, kind, namespace, name)


def _steps(sim: Sim, count: int) -> None:
    for _ in range(count):
        sim.step()


def _steps_until(sim: Sim, done: Callable[[], bool], limit: int) -> int | None:
    """The steps taken until ``done()`` (``None``: not within ``limit``)."""
    for steps in range(limit):
        if done():
            return steps
        sim.step()
    return None


def _running(sim: Sim) -> bool:
    return Sim.true(sim.suggestion(), "Running")


@pytest.mark.parametrize("relist", [NEVER, RELIST_SECONDS])
def test_a_lost_deployment_update_no_longer_leaves_the_suggestion_deploying(
    tmp_path: Path, relist: float
) -> None:
    sim = Sim(tmp_path, relist_seconds=relist)
    sim.cluster.faults.watch.lose_next(100, kind="Deployment", type="MODIFIED")
    steps = _steps_until(sim, lambda: _running(sim), REPAIRED_WITHIN)
    if relist == NEVER:  # the damage: the controller never learns that it became available
        assert steps is None
        assert Sim.true(sim.deployment(), "Available")
        assert not Sim.true(sim.suggestion(), "DeploymentReady")
        return
    assert steps is not None and RELIST_SECONDS <= steps < REPAIRED_WITHIN  # at the relist
    sim.settle()
    assert Sim.true(sim.experiment(), "Succeeded")


@pytest.mark.parametrize("relist", [NEVER, RELIST_SECONDS])
def test_a_lost_deployment_delete_no_longer_reports_running_without_one(
    tmp_path: Path, relist: float
) -> None:
    sim = Sim(tmp_path, max_trials=None, relist_seconds=relist)  # runs until told otherwise
    _steps_until(sim, lambda: _running(sim), 100)
    deployment = sim.deployment()
    assert deployment is not None and _running(sim)
    sim.cluster.faults.watch.lose_next(1, kind="Deployment", type="DELETED")
    sim.cluster.api.delete(ObjectRef.of(deployment), deployment["metadata"]["uid"])  # by hand
    _steps(sim, REPAIRED_WITHIN)
    if relist == NEVER:  # the damage: Running, with no Deployment behind it
        assert _running(sim) and sim.deployment() is None
        assert _cached(sim, "Deployment", CHILD, "apps/v1") is not None
        return
    replaced = sim.deployment()
    assert replaced is not None, "the lost Deployment was made again"
    assert replaced["metadata"]["uid"] != deployment["metadata"]["uid"]
    _steps(sim, 5)
    assert _running(sim) and Sim.true(sim.deployment(), "Available")


def _raise_lost_at_random(root: Path, seed: int, relist: float) -> Sim:
    """The budget is raised after completion, under 10 % random loss of every watch event."""
    sim = Sim(root, "FromVolume", max_trials=4, parallel=2, seed=seed, relist_seconds=relist)
    sim.cluster.faults.watch.at_random(loss=0.1, seed=seed)
    for _ in range(600):
        if sim.completed():
            break
        sim.step()
    sim.raise_budget(3)
    _steps(sim, 600)
    return sim


@pytest.mark.parametrize("seed", range(5))
def test_ten_percent_random_loss_keeps_the_users_budget_raise(tmp_path: Path, seed: int) -> None:
    sim = _raise_lost_at_random(tmp_path, seed, RELIST_SECONDS)
    experiment = sim.experiment()
    assert experiment is not None and experiment["spec"]["maxTrialCount"] == 7
    cached = _cached(sim, "Experiment", NAME)
    assert isinstance(cached, dict) and cached["spec"]["maxTrialCount"] == 7
    assert len(sim.trials()) == 7
    assert Sim.true(experiment, "Succeeded") and sim.cluster.faults.watch.lost > 0


def test_without_the_relist_random_loss_does_lose_a_budget_raise(tmp_path: Path) -> None:
    """The fault the test above survives is real: with no relist, some seeds lose the raise."""
    lost = 0
    for seed in range(5):
        sim = _raise_lost_at_random(tmp_path / str(seed), seed, NEVER)
        cached = _cached(sim, "Experiment", NAME)
        assert isinstance(cached, dict)
        lost += cached["spec"]["maxTrialCount"] != 7
    assert lost >= 1
