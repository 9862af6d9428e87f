"""A whole embedded runtime around one Experiment, for property tests and benchmarks.

``Sim`` applies Katib's from-volume example (with the policy, budget and parallelism asked for)
to a fresh fake cluster and world in a temporary directory, and offers what the tests need to
play the world and inspect it: restart the controller process, raise the budget through
admission, read conditions and children.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from katib_resume.adapters.fake import ControllerCrash, FakeClock, FakeCluster, FakeWorld
from katib_resume.adapters.fake.clone import clone
from katib_resume.adapters.fake.store import select
from katib_resume.app.common.inputs import embedded_config, load_config
from katib_resume.app.embedded.runtime import RELIST_SECONDS, Runtime
from katib_resume.core.actions import ObjectRef
from katib_resume.core.config import KatibConfig
from katib_resume.core.defaults import default_experiment
from katib_resume.core.katib import ANNOTATION_SEED, API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment
from katib_resume.core.validation import validate
from tests.support.harness import load

NAME, NAMESPACE = "from-volume-resume", "kubeflow"
CHILD = f"{NAME}-random"
PV_NAME = f"{CHILD}-{NAMESPACE}"


@functools.cache
def _shipped_config() -> KatibConfig:
    return load_config(None)  # frozen: safe to share


@functools.cache
def local_config() -> KatibConfig:
    """The embedded runtime's default: the shipped katib-config in the local volume mode."""
    return embedded_config()


def example(
    policy: str,
    max_trials: int | None,
    parallel: int,
    seed: int,
    distribution: str = "",
    *,
    parameters: list[Manifest] | None = None,
) -> Manifest:
    """Katib's example as asked for; ``parameters`` (unless ``None``) instead of its own, and
    ``distribution`` (unless empty) on each parameter."""
    raw: Manifest = load("from-volume-resume.yaml")  # a private copy
    spec = raw["spec"]
    spec.update(resumePolicy=policy, parallelTrialCount=parallel)
    if parameters is not None:
        spec["parameters"] = clone(parameters)
    for parameter in spec["parameters"] if distribution else ():
        parameter["feasibleSpace"]["distribution"] = distribution
    spec.pop("maxFailedTrialCount", None)
    if max_trials is None:
        spec.pop("maxTrialCount")
    else:
        spec["maxTrialCount"] = max_trials
    raw["metadata"]["annotations"] = {ANNOTATION_SEED: str(seed)}
    return default_experiment(Experiment.model_validate(raw)).to_dict()


class Sim:
    def __init__(
        self,
        root: Path,
        policy: str = "FromVolume",
        *,
        max_trials: int | None = 12,
        parallel: int = 3,
        seed: int = 1,
        config: KatibConfig | None = None,
        relist_seconds: float = RELIST_SECONDS,
        distribution: str = "",
        parameters: list[Manifest] | None = None,
    ) -> None:
        self.relist_seconds = relist_seconds
        """How often the controller lists its cache again from the API server."""
        self.cluster = FakeCluster(FakeClock())
        self.world = FakeWorld(self.cluster, root / "volumes")
        self.config = config or _shipped_config()
        self.policy = policy
        self._example = example(
            policy, max_trials, parallel, seed, distribution, parameters=parameters
        )
        self.apply_example()
        self.runtime = self._runtime()

    def apply_example(self) -> None:
        """Create the Experiment (again, once the last one is gone: a user applying the same
        file to a cluster and a controller that have been running all along)."""
        self.cluster.create(clone(self._example))

    def _runtime(self) -> Runtime:
        return Runtime(self.cluster, self.world, self.config, relist_seconds=self.relist_seconds)

    def restart_controller(self) -> None:
        """The controller process died: a new one starts with nothing in memory."""
        self.runtime.close()
        self.runtime = self._runtime()

    # -- reading ------------------------------------------------------------------------------
    def get(self, kind: str, name: str = NAME, api: str = API_VERSION) -> Manifest | None:
        """The stored object itself, not a private copy: the harness and the tests only read
        what they get (an edit starts from a ``clone``, as ``raise_budget``'s does), and the
        store never mutates a stored object."""
        namespace = None if kind == "PersistentVolume" else NAMESPACE
        return self.cluster.store.find(ObjectRef(api, kind, namespace, name))

    def experiment(self) -> Manifest | None:
        return self.get("Experiment")

    def suggestion(self) -> Manifest | None:
        return self.get("Suggestion")

    def deployment(self) -> Manifest | None:
        return self.get("Deployment", CHILD, "apps/v1")

    def service(self) -> Manifest | None:
        return self.get("Service", CHILD, "v1")

    def pvc(self) -> Manifest | None:
        return self.get("PersistentVolumeClaim", CHILD, "v1")

    def trials(self) -> list[Manifest]:
        """The stored Trials (read-only, as ``get``), oldest first."""
        mine = {LABEL_EXPERIMENT: NAME}
        found = select(self.cluster.store.all(), API_VERSION, "Trial", NAMESPACE, mine, copy=False)
        return sorted(found, key=_created)

    @staticmethod
    def true(obj: Manifest | None, type_: str) -> bool:
        conditions = (obj or {}).get("status", {}).get("conditions", [])
        return any(c["type"] == type_ and c["status"] == "True" for c in conditions)

    def completed(self) -> bool:
        exp = self.experiment()
        return self.true(exp, "Succeeded") or self.true(exp, "Failed")

    def assignments(self) -> list[tuple[tuple[str, str], ...]]:
        suggestion = self.suggestion() or {}
        return [
            tuple((p["name"], p["value"]) for p in a["parameterAssignments"])
            for a in suggestion.get("status", {}).get("suggestions", [])
        ]

    # -- acting -------------------------------------------------------------------------------
    def step(self) -> None:
        """One tick of the runtime; a controller that crashes mid-way is started again."""
        try:
            self.runtime.step()
        except ControllerCrash:
            self.restart_controller()

    def settle(self, max_steps: int = 2_000) -> int:
        """Step until the Experiment is completed (or gone) and a step plans no write."""
        for steps in range(1, max_steps + 1):
            controller = self.runtime.controller
            before = controller.stats.writes
            self.step()
            quiet = controller.stats.writes == before and not controller.failures
            if quiet and (self.experiment() is None or self.completed()):
                return steps
        raise AssertionError(f"no fixed point within {max_steps} steps")

    def delete_experiment(self, max_steps: int = 50) -> list[Manifest]:
        """The user deletes the Experiment, then ``drain``: what is left behind."""
        experiment = self.experiment()
        assert experiment is not None, "there is no Experiment to delete"
        self.cluster.delete(ObjectRef.of(experiment), experiment["metadata"]["uid"])
        return self.drain(max_steps)

    def drain(self, max_steps: int = 50) -> list[Manifest]:
        """Step until the cluster holds no object (at most ``max_steps``); what is left."""
        store = self.cluster.store
        for _ in range(max_steps):
            if not store.all():
                break
            self.step()
        return store.all()

    def raise_budget(self, by: int) -> bool:
        """The user raises ``maxTrialCount`` through admission; whether it was admitted."""
        old = self.experiment()
        if old is None:
            return False
        new: dict[str, Any] = clone(old)  # the user's edit of what they read
        current = new["spec"].get("maxTrialCount")
        new["spec"]["maxTrialCount"] = (current or len(self.trials())) + by
        admitted = validate(
            Experiment.model_validate(new), Experiment.model_validate(old), catalog=self.config
        )
        if admitted.allowed:
            self.cluster.api.update(new)
        return admitted.allowed


def _created(obj: Manifest) -> tuple[str, str]:
    return (obj["metadata"]["creationTimestamp"], obj["metadata"]["name"])
