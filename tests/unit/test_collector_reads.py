r"""The embedded metrics collector (``adapters.local.trials.collector``) on a ``File`` Trial: a
custom TEXT filter, an unreadable filter, and a file that cannot be opened.

The custom filter cases are those of Katib's ``file-metricscollector_test.go`` (its filter
``{metricName: ([\w|-]+), metricValue: ((-?\d+)(\.\d+)?)}``: several matches on a line, signed
and fractional values; ``.333``, ``-.333``, ``- 345.333`` and ``888.`` do not match, so the
objective is missing and one ``unavailable`` row is reported). The file cannot be opened: Katib's
sidecar fails with ``errOpenFile`` (the pod fails, nothing is reported); here the pod has
already succeeded, the file reads as empty and the objective's ``unavailable`` row is reported,
so the Trial ends MetricsUnavailable at once instead of waiting for the bounded wait.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from katib_resume.adapters.fake import FakeCluster
from katib_resume.adapters.fake.observations import FakeObservationLog
from katib_resume.adapters.local.trials.collector import LABEL_JOB_NAME, Collector
from katib_resume.core.manifest import Manifest
from katib_resume.core.observation import MetricRow, TrialKey
from tests.support.pods import NAMESPACE, created_job, stdout_trial, trial_world

ZERO = "0001-01-01T00:00:00Z"
KATIB_FILTER = r"{metricName: ([\w|-]+), metricValue: ((-?\d+)(\.\d+)?)}"
KEY = TrialKey(NAMESPACE, "t1")


def file_trial(path: str, filters: list[str] | None = None, fmt: str = "TEXT") -> Manifest:
    source: dict[str, Any] = {"fileSystemPath": {"kind": "File", "path": path, "format": fmt}}
    if filters is not None:
        source["filter"] = {"metricsFormat": filters}
    trial = stdout_trial(metricsCollector={"collector": {"kind": "File"}, "source": source})
    trial["spec"]["objective"]["additionalMetricNames"] = ["loss"]
    return trial


def collected(trial: Manifest, workdir: Path) -> tuple[FakeCluster, FakeObservationLog]:
    """Collect the succeeded pod of ``trial``'s Job, as the embedded kubelet asks."""
    cluster, stored = trial_world(trial)
    job = created_job(cluster, stored)
    meta = {"name": "t1-pod", "namespace": NAMESPACE, "labels": {LABEL_JOB_NAME: "t1"}}
    log = FakeObservationLog()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": job["spec"]["template"]}
    Collector(cluster, log).collect(pod, {}, workdir)
    return cluster, log


def test_a_custom_filter_reads_several_matches_a_line_and_signed_values(tmp_path: Path) -> None:
    (tmp_path / "metrics.log").write_text(
        "2021-12-02T14:27:51.000001Z {metricName: accuracy, metricValue: 100}"
        " {metricName: loss, metricValue: 888.333}\n"
        "{metricName: accuracy, metricValue: -0.4759}\n"
        "accuracy=0.99\n",  # the default filter's form: not this filter's
        encoding="utf-8",
    )
    _, log = collected(file_trial("metrics.log", [KATIB_FILTER]), tmp_path)
    assert log.get(KEY, ("accuracy", "loss")) == (
        MetricRow(ZERO, "accuracy", "-0.4759"),
        MetricRow("2021-12-02T14:27:51.000001Z", "accuracy", "100"),
        MetricRow("2021-12-02T14:27:51.000001Z", "loss", "888.333"),
    )


def test_values_the_custom_filter_does_not_match_leave_the_objective_unavailable(
    tmp_path: Path,
) -> None:
    lines = [".333", "-.333", "- 345.333", "888."]
    text = "".join(f"{{metricName: accuracy, metricValue: {value}}}\n" for value in lines)
    (tmp_path / "metrics.log").write_text(text + "loss=1\n", encoding="utf-8")
    _, log = collected(file_trial("metrics.log", [KATIB_FILTER]), tmp_path)
    assert log.get(KEY, ("accuracy", "loss")) == (MetricRow(ZERO, "accuracy", "unavailable"),)


def test_an_unreadable_filter_reports_nothing_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "metrics.log").write_text("accuracy=1\n", encoding="utf-8")
    cluster, log = collected(file_trial("metrics.log", ["("]), tmp_path)
    assert [call for call in log.calls if call[0] == "report"] == []
    assert [(e.type, e.reason, e.message) for e in cluster.events] == [
        (
            "Warning",
            "MetricsUnreadable",
            "invalid metrics filter: missing ), unterminated subpattern at position 0",
        )
    ]


def test_a_file_that_cannot_be_opened_reports_the_objective_unavailable(tmp_path: Path) -> None:
    (tmp_path / "a-directory").mkdir()
    for path in ("missing.log", "a-directory"):
        cluster, log = collected(file_trial(path), tmp_path)
        assert log.get(KEY, ("accuracy", "loss")) == (MetricRow(ZERO, "accuracy", "unavailable"),)
        assert list(cluster.events) == []
