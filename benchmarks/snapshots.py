"""Observed snapshots of one Suggestion in every lifecycle state, captured from a real run.

A FromVolume lifecycle (plus a blocked and a failed variant) is played on the fake cluster; the
raw objects that ``app.reconcile.gather`` reads are captured the first time the Suggestion is
seen in each state, so the benchmark plans exactly what a controller would observe.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from katib_resume.app.loop.reconcile import gather
from katib_resume.core import model
from katib_resume.core.lifecycle.suggestion import derive
from katib_resume.core.manifest import Manifest
from katib_resume.core.observed import Observed, Outcome, Validation
from tests.integration.test_resume_sequences import experiment, first_run
from tests.support.harness import Bench


@dataclass(frozen=True)
class RawSnapshot:
    """The raw objects of one snapshot, by the ``Observed`` field they fill."""

    objects: dict[str, Any]

    def parse(self) -> Observed:
        return observed_from(self.objects)


def observed_from(objects: dict[str, Any]) -> Observed:
    """Parse raw objects the way the shell does after reading them."""
    kinds: dict[str, Callable[[Manifest], Any]] = {
        "experiment": model.Experiment.model_validate,
        "suggestion": model.Suggestion.model_validate,
        "deployment": model.Deployment.model_validate,
        "service": model.OwnedObject.model_validate,
        "pvc": model.PersistentVolumeClaim.model_validate,
        "pv": model.PersistentVolume.model_validate,
    }
    fields = {key: kinds[key](raw) for key, raw in objects.items() if key in kinds and raw}
    trials = tuple(model.Trial.model_validate(raw) for raw in objects.get("trials", ()))
    return Observed(objects["namespace"], objects["name"], trials=trials, **fields)


def _raw(observed: Observed) -> dict[str, Any]:
    raw: dict[str, Any] = {"namespace": observed.namespace, "name": observed.name}
    for key in ("experiment", "suggestion", "deployment", "service", "pvc", "pv"):
        value = getattr(observed, key)
        raw[key] = value.to_dict() if value is not None else None
    raw["trials"] = [trial.to_dict() for trial in observed.trials]
    return copy.deepcopy(raw)


def capture() -> dict[str, RawSnapshot]:
    """One snapshot per Suggestion state, keyed by the state's name."""
    found: dict[str, RawSnapshot] = {}

    def look(bench: Bench) -> None:
        observed = gather(bench.cluster, bench.key)
        if observed.suggestion is not None:
            found.setdefault(derive(observed.suggestion).value, RawSnapshot(_raw(observed)))

    bench = Bench(experiment("FromVolume"))
    original = bench.reconcile

    def watched() -> Any:
        look(bench)
        return original()

    bench.reconcile = watched  # type: ignore[method-assign]
    first_run(bench)
    bench.edit(maxTrialCount=20)
    bench.settle()
    bench.set_available()
    bench.settle()
    bench.delete_experiment()
    look(bench)
    blocked = Bench(experiment("FromVolume"))
    blocked.cluster.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "from-volume-resume-random", "namespace": "kubeflow"},
        }
    )
    blocked.settle()
    look(blocked)
    failing = Bench(experiment("FromVolume"))
    failing.validation = Validation(Outcome.INVALID, "bad settings")
    failing.settle()
    failing.set_available()
    failing.settle()
    look(failing)
    return found
