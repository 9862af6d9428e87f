"""Fuzzing ``/mutate-pod``: broken pod reviews, and broken Trials behind well-formed pods.

The contract is ``test_webhook_fuzz``'s (every request answered, the uid echoed, never an
internal error), and an allowed patch applies to the pod as sent and only adds to it. The pods
are real Trial pods (StdOut, File with early stopping, Push, Custom) whose chain of owners
leads to a Trial, so the fuzz reaches every step of the injection; the second test keeps the
pod and breaks the stored Trial instead, the object a user writes by hand.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.webhook import MUTATE_POD, Admission, Incoming, Reply
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from tests.property.test_webhook_fuzz import broken, encode, fuzz_settings, run_direct
from tests.support.delegating import DelegatingCluster
from tests.support.documents import paths
from tests.support.pods import (
    admission,
    created_job,
    job_pod,
    pod_review,
    stdout_trial,
    trial_world,
)

REVIEWS = 3_000
TRIALS = 1_500
RULES = [{"name": "accuracy", "value": "0.6", "comparison": "less", "startStep": 5}]


def _trials() -> list[Manifest]:
    early = stdout_trial("t2", "File", earlyStoppingRules=RULES)
    early["spec"]["metricsCollector"]["source"] = {
        "fileSystemPath": {"path": "/var/log/katib/m.json", "kind": "File", "format": "JSON"},
        "filter": {"metricsFormat": ["(\\w+)=(\\d+)"]},
    }
    custom = stdout_trial("t4", "Custom")
    custom["spec"]["metricsCollector"]["collector"]["customCollector"] = {"name": "mine"}
    return [stdout_trial("t1"), early, stdout_trial("t3", "Push"), custom]


def _world() -> tuple[FakeCluster, list[Manifest]]:
    cluster, _ = trial_world(_trials()[0])
    stored = [cluster.get(ObjectRef("kubeflow.org/v1beta1", "Trial", "kubeflow", "t1"))]
    stored += [cluster.create(trial) for trial in _trials()[1:]]
    return cluster, [job_pod(created_job(cluster, trial)) for trial in stored]


CLUSTER, PODS = _world()
ADMISSION = admission(CLUSTER)
BASES = [pod_review(pod) for pod in PODS]
BASE_PATHS = [paths(base) for base in BASES]


def _post(body: bytes) -> Incoming:
    return Incoming("POST", MUTATE_POD, "application/json", body)


def _outcome(reply: Reply) -> str:
    response = reply.body.get("response") or {}
    if not response:
        return "http-error"
    if not response["allowed"]:
        return "denied"
    return "patched" if "patch" in response else "unchanged"


def test_broken_pod_reviews_are_answered_by_uid() -> None:
    count: list[str] = []

    @fuzz_settings(REVIEWS)
    @given(st.integers(0, len(BASES) - 1), st.data())
    def fuzz(index: int, data: st.DataObject) -> None:
        document = data.draw(
            st.composite(lambda draw: broken(draw, BASES[index], BASE_PATHS[index]))()
        )
        count.append(_outcome(run_direct(_post(encode(document)), ADMISSION)))

    fuzz()
    assert len(count) >= REVIEWS
    assert {"patched", "denied", "unchanged"} <= set(count), "the fuzz reaches every answer"


class _BrokenTrial(DelegatingCluster):
    """The cluster, with the Trial read replaced by ``trial``."""

    def __init__(self, inner: FakeCluster, trial: Any) -> None:
        super().__init__(inner)
        self.trial = trial

    def get(self, ref: ObjectRef) -> Manifest:
        if ref.kind == "Trial":
            found: Manifest = copy.deepcopy(self.trial)
            return found
        return self.inner.get(ref)


STORED = [
    CLUSTER.get(ObjectRef("kubeflow.org/v1beta1", "Trial", "kubeflow", f"t{n}"))
    for n in (1, 2, 3, 4)
]
TRIAL_PATHS = [paths(trial) for trial in STORED]


def test_a_broken_trial_refuses_its_pod_with_a_message() -> None:
    count: list[str] = []

    @fuzz_settings(TRIALS)
    @given(st.integers(0, len(STORED) - 1), st.data())
    def fuzz(index: int, data: st.DataObject) -> None:
        trial = data.draw(
            st.composite(lambda draw: broken(draw, STORED[index], TRIAL_PATHS[index]))()
        )
        admitter = Admission(_BrokenTrial(CLUSTER, trial), ADMISSION.config, ADMISSION.db_manager)
        count.append(_outcome(run_direct(_post(json.dumps(BASES[index]).encode()), admitter)))

    fuzz()
    assert len(count) >= TRIALS
    assert {"patched", "denied"} <= set(count), "broken Trials are refused, others still patched"
