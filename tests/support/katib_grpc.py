"""Katib's suggestion service over real gRPC on localhost, for tests of the gRPC client.

``KatibServer`` serves ``api.v1.beta1.Suggestion`` and ``api.v1.beta1.EarlyStopping`` with
``grpc.method_handlers_generic_handler`` on a free port of 127.0.0.1, records every request it
decodes, and answers through a ``Behaviour``: a script written by a test, or
``LocalAlgorithm``, which runs our own random/grid search (``adapters.local.suggestion``) the
way a Katib algorithm service would. A behaviour fails a call by raising ``Abort`` with the
status code and details the client must see.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import grpc

from katib_resume.adapters.grpc.api import Method, Wire
from katib_resume.adapters.grpc.codec import experiment_manifest
from katib_resume.adapters.grpc.server import katib_handlers
from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.core.model import Experiment
from katib_resume.core.observed import Outcome


class Abort(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code, self.details = code, details


Handler = Callable[[Wire], Wire]


@dataclass
class Behaviour:
    """What the service answers, method by method (``None``: ``UNIMPLEMENTED``)."""

    get_suggestions: Handler | None = None
    validate_algorithm_settings: Handler | None = None
    validate_early_stopping_settings: Handler | None = None
    get_early_stopping_rules: Handler | None = None
    delay: float = 0.0  # seconds before every answer (for deadlines)

    def handler(self, method: Method) -> Handler | None:
        by_name: dict[str, Handler | None] = {
            "GetSuggestions": self.get_suggestions,
            "ValidateAlgorithmSettings": self.validate_algorithm_settings,
            "ValidateEarlyStoppingSettings": self.validate_early_stopping_settings,
            "GetEarlyStoppingRules": self.get_early_stopping_rules,
        }
        return by_name[method.name]


@dataclass
class LocalAlgorithm:
    """Katib's random (or grid) service, played by ``SuggestionServer``: one per Experiment,
    kept for the life of this object, re-serving an assignment asked for again."""

    seed: int = 7
    servers: dict[str, SuggestionServer] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def behaviour(self) -> Behaviour:
        return Behaviour(self.get_suggestions, self.validate, lambda _: {})

    def validate(self, request: Wire) -> Wire:
        verdict = SuggestionServer(self._experiment(request), self.seed, None).validate()
        if verdict.outcome is Outcome.INVALID:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT, verdict.message)
        return {}

    def get_suggestions(self, request: Wire) -> Wire:
        experiment = self._experiment(request)
        total = request.get("total_request_number", 0)
        have = total - request.get("current_request_number", 0)
        with self.lock:
            server = self.servers.get(experiment.metadata.name)
            if server is None:
                server = SuggestionServer(experiment, self.seed, None)
                server.start([])
                self.servers[experiment.metadata.name] = server
            issued = server.issued
            fresh = server.get_suggestions(issued[:have], total)
        return {
            "parameter_assignments": [
                {"trial_name": item["name"], "assignments": item["parameterAssignments"]}
                for item in fresh
            ]
        }

    @staticmethod
    def _experiment(request: Wire) -> Experiment:
        manifest = experiment_manifest(request.get("experiment", {}))
        manifest["metadata"]["namespace"] = "default"
        return Experiment.model_validate(manifest)


class KatibServer:
    def __init__(self, behaviour: Behaviour, port: int = 0) -> None:
        self.behaviour = behaviour
        self.requests: list[tuple[str, Wire]] = []
        self.replies: list[Wire] = []  # the answers to GetSuggestions
        self.server = grpc.server(ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers(katib_handlers(self._answer))
        self.port = self.server.add_insecure_port(f"127.0.0.1:{port}")
        self.server.start()

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def requests_of(self, method: str) -> list[Wire]:
        return [request for name, request in self.requests if name == method]

    def stop(self) -> None:
        self.server.stop(grace=None).wait()

    def _answer(self, method: Method, request: Wire, context: grpc.ServicerContext) -> Wire:
        self.requests.append((method.name, request))
        if self.behaviour.delay:
            time.sleep(self.behaviour.delay)
        handler = self.behaviour.handler(method)
        if handler is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{method.name} is not implemented")
        try:
            reply = handler(request)
        except Abort as error:
            context.abort(error.code, error.details)
        if method.name == "GetSuggestions":
            self.replies.append(reply)
        return reply
