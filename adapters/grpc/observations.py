"""``GrpcObservationLog``: the ``ObservationLog`` port over katib-db-manager's gRPC API.

katib-db-manager stays Katib's own component (its database too); the controller reads a
Trial's rows with one ``GetObservationLog`` per metric (the objective first, as Katib does),
reports the ``Push`` placeholder with ``ReportObservationLog`` and deletes the rows with
``DeleteObservationLog`` when the Trial goes. Every call has a deadline (Katib's has none) and
a failure is ``Unavailable``, which the loop retries with backoff.

Katib's table is keyed by Trial name alone, and Katib's metrics collectors report under that
name, so on the wire the key is the Trial's name: the namespace of ``TrialKey`` cannot be sent
until the pod webhook that starts the collectors passes it too (docs/katib-contract.md#db-manager,
#2578).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import grpc

from katib_resume.adapters.grpc.api import (
    DELETE_OBSERVATION_LOG,
    GET_OBSERVATION_LOG,
    REPORT_OBSERVATION_LOG,
    Method,
    Wire,
    decode,
    encode,
)
from katib_resume.adapters.grpc.channels import Channels
from katib_resume.core.addresses import DB_MANAGER_ADDRESS
from katib_resume.core.observation import MetricRow, TrialKey
from katib_resume.core.ports import Unavailable

TIMEOUT = 30.0


class GrpcObservationLog:
    """Implements ``core.observation.ObservationLog`` against katib-db-manager."""

    def __init__(
        self,
        address: str = DB_MANAGER_ADDRESS,
        *,
        timeout: float = TIMEOUT,
        channels: Channels | None = None,
    ) -> None:
        self.address, self.timeout = address, timeout
        self.channels = channels or Channels()

    def get(self, key: TrialKey, metrics: Sequence[str]) -> tuple[MetricRow, ...]:
        rows: list[MetricRow] = []
        for metric in metrics:
            reply = self._call(GET_OBSERVATION_LOG, {"trial_name": key.name, "metric_name": metric})
            for log in reply.get("observation_log", {}).get("metric_logs", []):
                found = log.get("metric", {})
                rows.append(
                    MetricRow(
                        log.get("time_stamp", ""), found.get("name", ""), found.get("value", "")
                    )
                )
        return tuple(rows)

    def report(self, key: TrialKey, rows: Sequence[MetricRow]) -> None:
        logs = [
            {"time_stamp": row.time_stamp, "metric": {"name": row.name, "value": row.value}}
            for row in rows
        ]
        request = {"trial_name": key.name, "observation_log": {"metric_logs": logs}}
        self._call(REPORT_OBSERVATION_LOG, request)

    def delete(self, key: TrialKey) -> None:
        self._call(DELETE_OBSERVATION_LOG, {"trial_name": key.name})

    def close(self) -> None:
        self.channels.close()

    def _call(self, method: Method, request: Wire) -> Wire:
        call = self.channels.get(self.address).unary_unary(
            method.path,
            request_serializer=partial(encode, method.request),
            response_deserializer=partial(decode, method.reply),
        )
        try:
            reply: Wire = call(request, timeout=self.timeout)
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else None
            name = code.name if code is not None else "error"
            raise Unavailable(f"katib-db-manager {self.address}: {method.name}: {name}") from None
        return reply
