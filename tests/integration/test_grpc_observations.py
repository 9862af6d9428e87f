"""The observation log over real gRPC against a katib-db-manager stand-in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from katib_resume.adapters.grpc.observations import GrpcObservationLog
from katib_resume.core.observation import MetricRow, TrialKey
from katib_resume.core.ports import Unavailable
from tests.support.db_manager import DbManagerServer

KEY = TrialKey("default", "trial-a")


@pytest.fixture
def server() -> Iterator[DbManagerServer]:
    running = DbManagerServer()
    yield running
    running.stop()


def test_report_get_and_delete_round_trip(server: DbManagerServer) -> None:
    log = GrpcObservationLog(server.address, timeout=5)
    log.report(
        KEY,
        [
            MetricRow("2020-08-10T06:50:38Z", "accuracy", "0.11"),
            MetricRow("2020-08-10T06:47:38Z", "accuracy", "0.99"),
            MetricRow("2020-08-10T06:47:38Z", "loss", "0.3"),
        ],
    )
    rows = log.get(KEY, ["accuracy", "loss"])
    assert [(r.name, r.value) for r in rows] == [
        ("accuracy", "0.99"),
        ("accuracy", "0.11"),
        ("loss", "0.3"),
    ]
    assert server.calls[-1][1] == {"trial_name": "trial-a", "metric_name": "loss"}
    log.delete(KEY)
    assert log.get(KEY, ["accuracy"]) == ()
    log.close()


def test_a_failing_db_manager_is_unavailable(server: DbManagerServer) -> None:
    server.failing = 1
    log = GrpcObservationLog(server.address, timeout=5)
    with pytest.raises(Unavailable, match="GetObservationLog: UNAVAILABLE"):
        log.get(KEY, ["accuracy"])
    log.close()


def test_an_unreachable_db_manager_is_unavailable() -> None:
    log = GrpcObservationLog("127.0.0.1:1", timeout=0.5)
    with pytest.raises(Unavailable, match=r"katib-db-manager 127\.0\.0\.1:1"):
        log.delete(KEY)
    log.close()
