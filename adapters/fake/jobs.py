"""Kubernetes' Job controller, simulated: a ``batch/v1`` Job's pods, and its status from theirs.

Once per tick, for every Job that has not finished: while fewer pods have succeeded than its
``completions`` (default 1) and none is active, a pod is made from ``spec.template`` (named
``<job>-<five characters>``, labelled ``batch.kubernetes.io/job-name`` and
``batch.kubernetes.io/controller-uid`` and their short forms, controlled by the Job, so the
garbage collector removes it with the Job); each failed pod counts against ``backoffLimit``
(default 6), and one failure more than that fails the Job. The status is what the Job
controller writes (Kubernetes 1.31 and later): ``startTime``, the ``active``, ``succeeded`` and
``failed`` counts, and at the end two conditions: ``SuccessCriteriaMet`` then ``Complete``
(reason ``CompletionsReached``), or ``FailureTarget`` then ``Failed`` (reason
``BackoffLimitExceeded``), with ``completionTime`` on success. A status that would not change is
not written. ``parallelism`` above 1, indexed completions, pod failure policies and deadlines are
not simulated.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence

from katib_resume.adapters.fake.api import ApiServer
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest, format_time

JOB = ("batch/v1", "Job")
POD = ("v1", "Pod")
LABEL_JOB_NAME = "batch.kubernetes.io/job-name"
LABEL_CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
DEFAULT_BACKOFF_LIMIT = 6
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' generateName alphabet
COMPLETE = ("SuccessCriteriaMet", "Complete", "CompletionsReached")
COMPLETE_MESSAGE = "Reached expected number of succeeded pods"
FAILED = ("FailureTarget", "Failed", "BackoffLimitExceeded")
FAILED_MESSAGE = "Job has reached the specified backoff limit"


def phase(pod: Manifest) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def controller_uid(obj: Manifest) -> str | None:
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return str(ref.get("uid") or "")
    return None


def finished(job: Manifest) -> bool:
    conditions = (job.get("status") or {}).get("conditions") or ()
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conditions
    )


class JobController:
    def __init__(self, api: ApiServer) -> None:
        self.api = api

    def run(self, *, write_status: bool = True) -> None:
        """One pass; without ``write_status`` only the missing pods are made (the world's first
        pass of a tick: the second writes each Job's status once, after the kubelet)."""
        jobs = [j for j in self.api.observe(*JOB, None) if not finished(j)]
        if not jobs:
            return
        pods: dict[str, list[Manifest]] = defaultdict(list)
        for pod in self.api.observe(*POD, None):
            owner = controller_uid(pod)
            if owner:
                pods[owner].append(pod)
        for job in jobs:
            if not job["metadata"].get("deletionTimestamp"):
                self._sync(job, pods.get(job["metadata"]["uid"], []), write_status)

    def _sync(self, job: Manifest, pods: Sequence[Manifest], write_status: bool) -> None:
        spec = job.get("spec") or {}
        phases = [phase(pod) for pod in pods]
        succeeded, failed = phases.count("Succeeded"), phases.count("Failed")
        active = len(phases) - succeeded - failed
        completions = int(spec.get("completions") or 1)
        limit = spec.get("backoffLimit")
        limit = DEFAULT_BACKOFF_LIMIT if limit is None else int(limit)
        ending = None
        if succeeded >= completions:
            ending = (COMPLETE, COMPLETE_MESSAGE)
        elif failed > limit:
            ending = (FAILED, FAILED_MESSAGE)
        elif active == 0:
            self._create_pod(job, len(pods))
            active = 1
        if write_status:
            self._write(job, active, succeeded, failed, ending)

    def _create_pod(self, job: Manifest, index: int) -> None:
        meta, template = job["metadata"], (job.get("spec") or {}).get("template") or {}
        name, uid = meta["name"], meta["uid"]
        labels = {**((template.get("metadata") or {}).get("labels") or {})}
        labels.update({LABEL_CONTROLLER_UID: uid, LABEL_JOB_NAME: name})
        labels.update({"controller-uid": uid, "job-name": name})
        owner = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": name,
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
        pod: Manifest = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name[:57]}-{_suffix(uid, index)}",
                "namespace": meta.get("namespace") or "default",
                "labels": labels,
                "annotations": dict((template.get("metadata") or {}).get("annotations") or {}),
                "ownerReferences": [owner],
            },
            "spec": template.get("spec") or {},  # the server stores a private copy (``as_json``)
        }
        self.api.create(pod, copy=False)  # nobody reads the answer: no copy of it

    def _write(
        self,
        job: Manifest,
        active: int,
        succeeded: int,
        failed: int,
        ending: tuple[tuple[str, str, str], str] | None,
    ) -> None:
        old: Manifest = job.get("status") or {}
        now = format_time(self.api.clock.now())
        status: Manifest = {"startTime": old.get("startTime") or now, "ready": 0}
        counts = {"active": 0 if ending else active, "succeeded": succeeded, "failed": failed}
        status.update((key, value) for key, value in counts.items() if value)
        if ending is not None:
            (first, last, reason), message = ending
            status["conditions"] = [_condition(t, reason, message, now) for t in (first, last)]
            if last == "Complete":
                status["completionTime"] = now
        if status != old:
            self.api.update_status(ObjectRef.of(job), status, None, copy=False)


def _condition(type_: str, reason: str, message: str, now: str) -> Manifest:
    return {
        "type": type_,
        "status": "True",
        "reason": reason,
        "message": message,
        "lastProbeTime": now,
        "lastTransitionTime": now,
    }


def _suffix(uid: str, index: int) -> str:
    digest = hashlib.sha256(f"{uid}/{index}".encode()).digest()
    return "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])
