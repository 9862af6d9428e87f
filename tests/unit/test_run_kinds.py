"""Katib's T1 (docs/katib-contract.md#trial-controller-tests): a run kind whose CRD is missing is
skipped, not fatal."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from katib_resume.adapters.k8s.resources import RUN_KINDS
from katib_resume.adapters.k8s.run_kinds import MISSING, served_run_kinds
from katib_resume.core.ports import NotFound, Unavailable


class Transport:
    """Answers lists of the batch group only, as a cluster without Kubeflow's training CRDs."""

    def __init__(self, error: type[Exception] = NotFound) -> None:
        self.paths: list[str] = []
        self.error = error

    def request(self, method: str, path: str, **_: Any) -> dict[str, Any]:
        self.paths.append(path)
        if "/apis/batch/" in path:
            return {"items": []}
        raise self.error(path)


def test_missing_crds_are_skipped_with_katibs_message(caplog: pytest.LogCaptureFixture) -> None:
    transport = Transport()
    with caplog.at_level(logging.WARNING, logger="katib_resume.cluster"):
        served = served_run_kinds(transport, "team")  # type: ignore[arg-type]
    assert served == (("batch/v1", "Job"),)
    assert transport.paths[0] == "/apis/batch/v1/namespaces/team/jobs"
    assert len(transport.paths) == len(RUN_KINDS)
    missing = [r for r in caplog.records if r.getMessage() == MISSING]
    assert [r.__dict__["kind"] for r in missing] == [
        "TFJob.v1.kubeflow.org",
        "PyTorchJob.v1.kubeflow.org",
        "MPIJob.v1.kubeflow.org",
        "XGBoostJob.v1.kubeflow.org",
        "TrainJob.v1alpha1.trainer.kubeflow.org",
    ]


def test_any_other_error_is_not_taken_for_a_missing_crd() -> None:
    with pytest.raises(Unavailable):
        served_run_kinds(Transport(Unavailable), None)  # type: ignore[arg-type]
