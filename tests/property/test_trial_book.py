"""The reconcile shell's trial book: the ledger it advances with the Trials that changed equals
the full fold over the Trials the cache holds, after any sequence of changes (Trials created,
given outcomes, relabelled, deleted, in two namespaces; the Experiment re-created)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.fake import FakeClock, FakeCluster
from katib_resume.app.loop.informer import Informer
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.reconcile import Parsed
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.ports import NotFound
from katib_resume.core.trial_ledger import ledger_of

NS, NAME = "kubeflow", "exp"
OBJECTIVE = {"type": "minimize", "objectiveMetricName": "loss", "goal": 0.2}


def _experiment(cluster: FakeCluster) -> Experiment | None:
    try:
        return Experiment.model_validate(
            cluster.get(ObjectRef(API_VERSION, "Experiment", NS, NAME))
        )
    except NotFound:
        return None


def _trial(name: str, namespace: str, owner: Experiment | None, label: str) -> Manifest:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": {LABEL_EXPERIMENT: label},
    }
    if owner is not None and owner.metadata.uid:
        kind = {"apiVersion": API_VERSION, "kind": "Experiment", "name": NAME}
        meta["ownerReferences"] = [{**kind, "uid": owner.metadata.uid, "controller": True}]
    spec = {"parameterAssignments": [{"name": "lr", "value": name}]}
    return {"apiVersion": API_VERSION, "kind": "Trial", "metadata": meta, "spec": spec}


def _apply(cluster: FakeCluster, step: tuple[str, str, str, str]) -> None:
    op, name, namespace, value = step
    ref = ObjectRef(API_VERSION, "Trial", namespace, name)
    try:
        held = cluster.get(ref)
    except NotFound:
        held = None
    if op == "experiment":  # delete and make again: a new UID, the old Trials no longer owned
        exp = ObjectRef(API_VERSION, "Experiment", NS, NAME)
        if _experiment(cluster) is not None:
            cluster.delete(exp, cluster.get(exp)["metadata"]["uid"])
        manifest = {"apiVersion": API_VERSION, "kind": "Experiment"}
        meta = {"name": NAME, "namespace": NS}
        spec = {"objective": OBJECTIVE, "algorithm": {"algorithmName": "random"}}
        cluster.create({**manifest, "metadata": meta, "spec": spec})
    elif op == "create" and held is None:
        cluster.create(_trial(name, namespace, _experiment(cluster), NAME if value else "other"))
    elif op == "outcome" and held is not None:
        metric = {"name": "loss", "min": value, "max": value, "latest": value}
        phase = [{"type": "Succeeded", "status": "True"}]
        status = {"conditions": phase, "observation": {"metrics": [metric]}}
        cluster.update_status(ref, status, held["metadata"]["resourceVersion"])
    elif op == "relabel" and held is not None:
        held = {**held, "metadata": {**held["metadata"], "labels": {LABEL_EXPERIMENT: value}}}
        cluster.update(held)
    elif op == "delete" and held is not None:
        cluster.delete(ref, held["metadata"]["uid"])


steps = st.lists(
    st.tuples(
        st.sampled_from(["experiment", "create", "outcome", "relabel", "delete"]),
        st.sampled_from(["t1", "t2", "t3"]),
        st.sampled_from([NS, "elsewhere"]),
        st.sampled_from(["0.1", "0.5", NAME, "other", ""]),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(steps)
def test_the_advanced_ledger_equals_the_full_fold_after_any_changes(
    history: list[tuple[str, str, str, str]],
) -> None:
    cluster = FakeCluster(FakeClock())
    informer, parsed = Informer(cluster.for_cache()), Parsed()
    key = Key(NS, NAME)
    _apply(cluster, ("experiment", "", NS, ""))
    for step in history:
        _apply(cluster, step)
        informer.sync()
        experiment = _experiment(cluster)
        trials, ledger = parsed.book.read(informer, key, experiment, Trial.model_validate)
        listed = cluster.list(API_VERSION, "Trial", NS, {LABEL_EXPERIMENT: NAME})
        assert sorted(t.metadata.name for t in trials) == sorted(
            t["metadata"]["name"] for t in listed
        )
        assert experiment is not None and ledger is not None
        full = ledger_of(experiment, [Trial.model_validate(t) for t in listed])
        assert ledger.counts == full.counts
        assert ledger.current_optimal_trial() == full.current_optimal_trial()
        assert ledger.goal_reached(experiment.spec.objective) == full.goal_reached(
            experiment.spec.objective
        )
