"""A Suggestion deleted by hand while its Experiment runs: cleaned up, made again, finished.

The Experiment outlives its Suggestion here, so nothing but our own finalizer stands between
the delete and the Suggestion's removal: the planner must delete the PV the Suggestion owns,
let go of the Suggestion (and do nothing else with it: a Deleting Suggestion is neither deployed
nor re-marked), and then the Experiment's half makes a new one, which runs the Experiment to its
budget without repeating an assignment.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.actions import Create, Delete, ObjectRef, RemoveFinalizer, Requeue
from katib_resume.core.katib import ANNOTATION_OWNER_UID, FINALIZER_PV_CLEANUP
from katib_resume.core.model import PersistentVolume, Suggestion
from katib_resume.core.plan import Plan, plan
from tests.support.harness import shipped_config
from tests.support.sim import PV_NAME, Sim, local_config
from tests.unit.test_provision import experiment, observed, suggestion


@pytest.mark.parametrize("mode", ["provisioned", "local"])
def test_a_suggestion_deleted_by_hand_is_cleaned_up_and_made_again(
    tmp_path: Path, mode: str
) -> None:
    local = mode == "local"
    sim = Sim(tmp_path, parallel=1, config=local_config() if local else None)
    while len(sim.trials()) < 4:
        sim.step()
    old = sim.suggestion()
    assert old is not None and FINALIZER_PV_CLEANUP in old["metadata"]["finalizers"]
    old_pv = sim.get("PersistentVolume", PV_NAME, "v1")
    assert (old_pv is not None) is local
    sim.cluster.delete(ObjectRef.of(old), old["metadata"]["uid"])
    for _ in range(3):
        sim.step()
    new = sim.suggestion()
    assert new is not None and new["metadata"]["uid"] != old["metadata"]["uid"]
    assert "deletionTimestamp" not in new["metadata"]
    if old_pv is not None:
        pv = sim.get("PersistentVolume", PV_NAME, "v1")
        assert pv is None or pv["metadata"]["uid"] != old_pv["metadata"]["uid"]
    sim.settle()
    assert sim.completed() and len(sim.trials()) == 12
    names = [trial["metadata"]["name"] for trial in sim.trials()]
    assert len(set(names)) == 12
    assert len(set(sim.assignments())) == len(sim.assignments())


def test_the_plan_of_a_deleting_suggestion_is_its_cleanup_and_nothing_else() -> None:
    sug = suggestion(3, 3)
    raw = sug.to_dict()
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    deleting = Suggestion.model_validate(raw)
    pv = PersistentVolume.model_validate(
        {
            "metadata": {
                "name": "from-volume-resume-random-kubeflow",
                "uid": "pv-uid",
                "annotations": {ANNOTATION_OWNER_UID: "s-uid"},
            }
        }
    )
    state = replace(observed(experiment(), deleting, []), pv=pv)
    result = plan(state, shipped_config(), EPOCH)
    assert isinstance(result, Plan) and result.suggestion is not None
    assert (result.suggestion.before.value, result.suggestion.after.value) == (
        "Deleting",
        "Deleting",
    )
    kinds = ("Suggestion", "PersistentVolume", "Deployment", "Service", "PersistentVolumeClaim")
    ours = [
        a for a in result.actions if not isinstance(a, Create | Requeue) and a.ref.kind in kinds
    ]
    assert [(type(a), a.ref.kind) for a in ours] == [
        (Delete, "PersistentVolume"),
        (RemoveFinalizer, "Suggestion"),
    ]
