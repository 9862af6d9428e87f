"""Katib's metrics collector for the embedded runtime's pods, played in process.

On a cluster Katib's pod webhook adds a sidecar to each Trial's pod that waits for the training
container, parses its output (StdOut) or a file (File) and reports the rows to katib-db-manager.
Here the kubelet tells ``Collector.collect`` when a pod has succeeded, with its containers'
logs; the collector finds the pod's Trial (the pod's Job is named after it and controlled by it),
parses as Katib's collector does (``core.metrics_log``: the same filter, timestamps and
"unavailable" row) and reports to the observation log the trial controller reads. A File
collector's relative path is read from the pod's working directory. Other kinds (TensorFlowEvent,
Custom, None) are not collected here: their Trials await metrics until the bounded wait ends
(``docs/embedded.md``); ``Push`` Trials report nothing and end MetricsUnavailable at once.

``script`` is what a simulated pod prints: the synthetic objective's values for its Trial, one
``name=value`` line per metric, so that simulated and real pods go through the same parse.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

from katib_resume.adapters.local.trials.objective import assignments_of, synthetic_metrics
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.metrics_log import MetricsLogError, parse_log
from katib_resume.core.model.trial import Trial
from katib_resume.core.observation import ObservationLog, TrialKey, metric_names
from katib_resume.core.ports import Cluster, ClusterError, NotFound

LABEL_JOB_NAME = "batch.kubernetes.io/job-name"


class Collector:
    def __init__(self, cluster: Cluster, log: ObservationLog) -> None:
        self.cluster, self.log = cluster, log

    def collect(self, pod: Manifest, logs: Mapping[str, str], workdir: Path) -> None:
        """Report the rows of a pod that succeeded (nothing for a pod of no Trial)."""
        raw = self._trial_of(pod)
        if raw is None:
            return
        trial = Trial.model_validate(raw)
        spec = raw.get("spec") or {}
        collector = spec.get("metricsCollector") or {}
        kind = trial.spec.collector_kind
        source = collector.get("source") or {}
        filters = tuple((source.get("filter") or {}).get("metricsFormat") or ())
        if kind == "StdOut":
            text, fmt = logs.get(str(spec.get("primaryContainerName") or ""), ""), "TEXT"
        elif kind == "File":
            path = source.get("fileSystemPath") or {}
            text, fmt = (
                _read(workdir / str(path.get("path") or "")),
                str(path.get("format") or "TEXT"),
            )
        else:
            return
        try:
            rows = parse_log(text, metric_names(trial.spec.objective), fmt, filters)
        except MetricsLogError as error:
            with contextlib.suppress(ClusterError):
                self.cluster.record_event(
                    ObjectRef.of(raw), "Warning", "MetricsUnreadable", str(error)
                )
            return
        self.log.report(TrialKey(trial.namespace, trial.metadata.name), rows)

    def script(self, pod: Manifest) -> str:
        """What a simulated pod prints: its Trial's synthetic metrics, Katib's format."""
        raw = self._trial_of(pod)
        if raw is None:
            return ""
        spec = raw.get("spec") or {}
        objective = spec.get("objective")
        objective = objective if isinstance(objective, dict) else {}
        names = metric_names(Trial.model_validate(raw).spec.objective)
        values = synthetic_metrics(assignments_of(spec), names, str(objective.get("type", "")))
        return "".join(f"{name}={format(value, '.6g')}\n" for name, value in values.items())

    def _trial_of(self, pod: Manifest) -> Manifest | None:
        """The Trial that controls the Job that controls ``pod``, if any."""
        meta = pod["metadata"]
        namespace, job_name = (
            meta.get("namespace") or "default",
            (meta.get("labels") or {}).get(LABEL_JOB_NAME),
        )
        if not job_name:
            return None
        try:
            job = self.cluster.get(ObjectRef("batch/v1", "Job", namespace, job_name))
            trial = self.cluster.get(ObjectRef(API_VERSION, "Trial", namespace, job_name))
        except NotFound:
            return None
        owners = (job.get("metadata") or {}).get("ownerReferences") or ()
        uid = trial["metadata"].get("uid")
        return trial if any(r.get("controller") and r.get("uid") == uid for r in owners) else None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
