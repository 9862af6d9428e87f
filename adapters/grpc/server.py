"""Serving Katib's Suggestion and EarlyStopping APIs, and gRPC health, from plain handlers.

``ApiServer`` is the server side of ``api.py``: each method is a function from the request to
the reply, both dictionaries (``Wire``), so the service behind it never sees protobuf; a
request's Trials are each the bytes of its ``Trial`` message (``trial_bytes``: the service
decodes only those it has not seen). A handler
refuses a call by raising ``Refused`` with a status code name (``"INVALID_ARGUMENT"``) and
details, which the caller receives as that gRPC status: that is how a validation failure reaches
Katib's controller. A method without a handler answers ``UNIMPLEMENTED``. A handler that returns
a ``WithTrailers`` (a ``Wire`` with ``trailers``) sends them as the call's trailing metadata.

Health (``grpc.health.v1.Health/Check``, what the Deployment's gRPC probes ask) answers
``SERVING`` for the names in ``healthy`` (Katib's ``manager.v1beta1.Suggestion``) and
``NOT_FOUND`` for any other, as Katib's Python services do. Its two messages are declared here in
a descriptor pool of their own, like the API's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import Message

from katib_resume.adapters.grpc.api import METHODS, PACKAGE, Method, Wire, decode, encode
from katib_resume.adapters.grpc.trial_bytes import decode_keeping_trials

Handler = Callable[[Wire], Wire]


class WithTrailers(dict[str, Any]):
    """A reply, and the trailing metadata (``(key, value)`` pairs) to send with it."""

    def __init__(self, reply: Wire, trailers: tuple[tuple[str, str], ...]) -> None:
        super().__init__(reply)
        self.trailers = trailers


HEALTH_PACKAGE = "grpc.health.v1"


class Refused(Exception):
    """The call fails with gRPC status ``code`` (a ``grpc.StatusCode`` name) and ``details``."""

    def __init__(self, code: str, details: str) -> None:
        super().__init__(details)
        self.code, self.details = code, details


def _health_classes() -> dict[str, Any]:
    """The health service's message classes, made at run time: their fields are not known to
    the type checker (``Any``: types-protobuf 7.35 types ``Message()`` without keywords)."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="grpc/health/v1/health.proto", package=HEALTH_PACKAGE, syntax="proto3"
    )
    request = proto.message_type.add(name="HealthCheckRequest")
    request.field.add(
        name="service", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING
    )
    response = proto.message_type.add(name="HealthCheckResponse")
    status = response.enum_type.add(name="ServingStatus")
    for number, name in enumerate(("UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN")):
        status.value.add(name=name, number=number)
    field = response.field.add(name="status", number=1)
    field.type = descriptor_pb2.FieldDescriptorProto.TYPE_ENUM
    field.type_name = f".{HEALTH_PACKAGE}.HealthCheckResponse.ServingStatus"
    classes = message_factory.GetMessages([proto], pool=descriptor_pool.DescriptorPool())
    return {name.rsplit(".", 1)[1]: cls for name, cls in classes.items()}


HEALTH = _health_classes()


Answer = Callable[[Method, Wire, grpc.ServicerContext], Wire]


def katib_handlers(
    answer: Answer, *, trials_as_bytes: bool = False
) -> tuple[grpc.GenericRpcHandler, ...]:
    """Katib's Suggestion and EarlyStopping services, every method answered by ``answer``
    (our server's and the tests' stand-in for Katib's services alike); with
    ``trials_as_bytes``, a request's Trials reach ``answer`` as their bytes (``trial_bytes``)."""
    decoder = decode_keeping_trials if trials_as_bytes else decode
    handlers = []
    for service in ("Suggestion", "EarlyStopping"):
        methods = {
            method.name: grpc.unary_unary_rpc_method_handler(
                partial(answer, method),
                request_deserializer=partial(decoder, method.request),
                response_serializer=partial(encode, method.reply),
            )
            for method in METHODS
            if method.service == service
        }
        handlers.append(grpc.method_handlers_generic_handler(f"{PACKAGE}.{service}", methods))
    return tuple(handlers)


class ApiServer:
    """A started gRPC server on every address of ``addresses`` (``host:port``; port 0 picks)."""

    def __init__(
        self,
        handlers: Mapping[str, Handler],
        addresses: Iterable[str],
        healthy: Iterable[str] = (),
        workers: int = 10,
    ) -> None:
        self.handlers, self.healthy = dict(handlers), frozenset(healthy)
        self.server = grpc.server(ThreadPoolExecutor(max_workers=workers))
        self.server.add_generic_rpc_handlers(katib_handlers(self._answer, trials_as_bytes=True))
        check: grpc.RpcMethodHandler[Message, Message] = grpc.unary_unary_rpc_method_handler(
            self._health,
            request_deserializer=HEALTH["HealthCheckRequest"].FromString,
            response_serializer=lambda message: message.SerializeToString(),
        )
        health = grpc.method_handlers_generic_handler(f"{HEALTH_PACKAGE}.Health", {"Check": check})
        self.server.add_generic_rpc_handlers((health,))
        self.ports = [self.server.add_insecure_port(address) for address in addresses]
        self.server.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server stops (or ``timeout``); whether it stopped."""
        return bool(self.server.wait_for_termination(timeout))

    def stop(self, grace: float | None = None) -> None:
        self.server.stop(grace).wait()

    def _answer(self, method: Method, request: Wire, context: grpc.ServicerContext) -> Wire:
        handler = self.handlers.get(method.name)
        if handler is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{method.name} is not implemented")
        try:
            reply = handler(request)
        except Refused as refused:
            context.abort(grpc.StatusCode[refused.code], refused.details)
        if isinstance(reply, WithTrailers) and reply.trailers:
            context.set_trailing_metadata(reply.trailers)
        return reply

    def _health(self, request: Message, context: grpc.ServicerContext) -> Message:
        service = json_format.MessageToDict(request).get("service", "")
        if service not in self.healthy:
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {service}")
        reply: Message = HEALTH["HealthCheckResponse"](status=1)  # SERVING
        return reply
