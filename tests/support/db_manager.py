"""katib-db-manager's observation-log service over real gRPC on localhost, for tests.

Rows are kept as Katib keeps them: by Trial name alone, each metric's rows by time (insertion
order for ties), rows with an empty timestamp skipped. ``failing`` makes the next calls fail
with ``UNAVAILABLE``.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import grpc

from katib_resume.adapters.grpc.api import DB_MANAGER_METHODS, PACKAGE, Method, Wire, decode, encode


class DbManagerServer:
    def __init__(self) -> None:
        self.rows: dict[str, list[Wire]] = {}
        self.calls: list[tuple[str, Wire]] = []
        self.failing = 0
        self.lock = threading.Lock()
        self.server = grpc.server(ThreadPoolExecutor(max_workers=4))
        handlers = {
            method.name: grpc.unary_unary_rpc_method_handler(
                partial(self._answer, method),
                request_deserializer=partial(decode, method.request),
                response_serializer=partial(encode, method.reply),
            )
            for method in DB_MANAGER_METHODS
        }
        generic = grpc.method_handlers_generic_handler(f"{PACKAGE}.DBManager", handlers)
        self.server.add_generic_rpc_handlers((generic,))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.stop(grace=None).wait()

    def _answer(self, method: Method, request: Wire, context: grpc.ServicerContext) -> Wire:
        with self.lock:
            self.calls.append((method.name, request))
            if self.failing:
                self.failing -= 1
                context.abort(grpc.StatusCode.UNAVAILABLE, "database is down")
            name = request.get("trial_name", "")
            if method.name == "ReportObservationLog":
                logs = request.get("observation_log", {}).get("metric_logs", [])
                self.rows.setdefault(name, []).extend(log for log in logs if log.get("time_stamp"))
                return {}
            if method.name == "DeleteObservationLog":
                self.rows.pop(name, None)
                return {}
            metric = request.get("metric_name", "")
            found = [
                log
                for log in self.rows.get(name, [])
                if not metric or log.get("metric", {}).get("name") == metric
            ]
            found.sort(key=lambda log: str(log["time_stamp"]))
            return {"observation_log": {"metric_logs": found}}
