"""Katib's gRPC API ``api.v1.beta1`` (file ``api.proto``), described in Python at import.

No generated ``_pb2`` module and no proto text: the messages the controller exchanges with a
suggestion service and with katib-db-manager's observation log are declared below as a
``FileDescriptorProto`` (field names, numbers and types are the facts of Katib's wire format)
and turned into message classes in a private descriptor pool, so nothing clashes with another
copy of Katib's API loaded in the same process. Only what the controller and the suggestion
server exchange is declared (``nas_config`` and ``SetTrialStatus`` are left out): proto3 skips
fields a side does not know, so a service built from Katib's full file talks to this one unchanged.

Callers exchange plain dictionaries in protobuf's JSON mapping with the proto field names
(``encode`` / ``decode``): typed code cannot see the attributes of dynamic message classes,
and a dictionary is what the codec builds from Kubernetes objects anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import Message

PACKAGE = "api.v1.beta1"
EXHAUSTED = "katib-resume-exhausted"
"""Trailing metadata of a ``GetSuggestions`` reply from our service: the search has nothing left
to issue, in words for the user (Katib's API has no field for it; Katib's controller and
services ignore metadata they do not know, so neither side needs the other to have it)."""
FILE_NAME = "api.proto"

_F = descriptor_pb2.FieldDescriptorProto
STRING, INT32, DOUBLE = _F.TYPE_STRING, _F.TYPE_INT32, _F.TYPE_DOUBLE
MESSAGE, ENUM = _F.TYPE_MESSAGE, _F.TYPE_ENUM


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    number: int
    type: int = STRING
    of: str | None = None  # the message or enum type, relative to the package
    repeated: bool = False


def _message(
    name: str,
    fields: list[Field],
    nested: tuple[descriptor_pb2.DescriptorProto, ...] = (),
    enums: tuple[descriptor_pb2.EnumDescriptorProto, ...] = (),
    *,
    map_entry: bool = False,
) -> descriptor_pb2.DescriptorProto:
    message = descriptor_pb2.DescriptorProto(name=name)
    for spec in fields:
        field = message.field.add(name=spec.name, number=spec.number)
        field.type = spec.type  # type: ignore[assignment]
        field.label = _F.LABEL_REPEATED if spec.repeated else _F.LABEL_OPTIONAL
        if spec.of is not None:
            field.type_name = f".{PACKAGE}.{spec.of}"
    message.nested_type.extend(nested)
    message.enum_type.extend(enums)
    if map_entry:
        message.options.map_entry = True
    return message


def _string_map(name: str) -> descriptor_pb2.DescriptorProto:
    """A ``map<string, string>`` field's hidden entry message (what protoc generates)."""
    return _message(name, [Field("key", 1), Field("value", 2)], map_entry=True)


def _enum(name: str, values: list[str]) -> descriptor_pb2.EnumDescriptorProto:
    enum = descriptor_pb2.EnumDescriptorProto(name=name)
    for number, value in enumerate(values):
        enum.value.add(name=value, number=number)
    return enum


def _pair(name: str) -> descriptor_pb2.DescriptorProto:
    return _message(name, [Field("name", 1), Field("value", 2)])


def _messages() -> list[descriptor_pb2.DescriptorProto]:
    return [
        _message("Experiment", [Field("name", 1), Field("spec", 2, MESSAGE, "ExperimentSpec")]),
        _message(
            "ExperimentSpec",
            [
                Field("parameter_specs", 1, MESSAGE, "ExperimentSpec.ParameterSpecs"),
                Field("objective", 2, MESSAGE, "ObjectiveSpec"),
                Field("algorithm", 3, MESSAGE, "AlgorithmSpec"),
                Field("early_stopping", 4, MESSAGE, "EarlyStoppingSpec"),
                Field("parallel_trial_count", 5, INT32),
                Field("max_trial_count", 6, INT32),
            ],
            nested=(
                _message(
                    "ParameterSpecs", [Field("parameters", 1, MESSAGE, "ParameterSpec", True)]
                ),
            ),
        ),
        _message(
            "ParameterSpec",
            [
                Field("name", 1),
                Field("parameter_type", 2, ENUM, "ParameterType"),
                Field("feasible_space", 3, MESSAGE, "FeasibleSpace"),
            ],
        ),
        _message(
            "FeasibleSpace",
            [
                Field("max", 1),
                Field("min", 2),
                Field("list", 3, repeated=True),
                Field("step", 4),
                Field("distribution", 5, ENUM, "Distribution"),
            ],
        ),
        _message(
            "ObjectiveSpec",
            [
                Field("type", 1, ENUM, "ObjectiveType"),
                Field("goal", 2, DOUBLE),
                Field("objective_metric_name", 3),
                Field("additional_metric_names", 4, repeated=True),
            ],
        ),
        _message(
            "AlgorithmSpec",
            [
                Field("algorithm_name", 1),
                Field("algorithm_settings", 2, MESSAGE, "AlgorithmSetting", True),
            ],
        ),
        _pair("AlgorithmSetting"),
        _message(
            "EarlyStoppingSpec",
            [
                Field("algorithm_name", 1),
                Field("algorithm_settings", 2, MESSAGE, "EarlyStoppingSetting", True),
            ],
        ),
        _pair("EarlyStoppingSetting"),
        _message(
            "Trial",
            [
                Field("name", 1),
                Field("spec", 2, MESSAGE, "TrialSpec"),
                Field("status", 3, MESSAGE, "TrialStatus"),
            ],
        ),
        _message(
            "TrialSpec",
            [
                Field("objective", 2, MESSAGE, "ObjectiveSpec"),
                Field("parameter_assignments", 3, MESSAGE, "TrialSpec.ParameterAssignments"),
                Field("labels", 4, MESSAGE, "TrialSpec.LabelsEntry", True),
            ],
            nested=(
                _message(
                    "ParameterAssignments",
                    [Field("assignments", 1, MESSAGE, "ParameterAssignment", True)],
                ),
                _string_map("LabelsEntry"),
            ),
        ),
        _pair("ParameterAssignment"),
        _message(
            "TrialStatus",
            [
                Field("start_time", 1),
                Field("completion_time", 2),
                Field("condition", 3, ENUM, "TrialStatus.TrialConditionType"),
                Field("observation", 4, MESSAGE, "Observation"),
            ],
            enums=(_enum("TrialConditionType", TRIAL_CONDITIONS),),
        ),
        _message("Observation", [Field("metrics", 1, MESSAGE, "Metric", True)]),
        _pair("Metric"),
        _message(
            "GetSuggestionsRequest",
            [
                Field("experiment", 1, MESSAGE, "Experiment"),
                Field("trials", 2, MESSAGE, "Trial", True),
                Field("current_request_number", 4, INT32),
                Field("total_request_number", 5, INT32),
            ],
        ),
        _message(
            "GetSuggestionsReply",
            [
                Field(
                    "parameter_assignments",
                    1,
                    MESSAGE,
                    "GetSuggestionsReply.ParameterAssignments",
                    True,
                ),
                Field("algorithm", 2, MESSAGE, "AlgorithmSpec"),
                Field("early_stopping_rules", 3, MESSAGE, "EarlyStoppingRule", True),
            ],
            nested=(
                _message(
                    "ParameterAssignments",
                    [
                        Field("assignments", 1, MESSAGE, "ParameterAssignment", True),
                        Field("trial_name", 2),
                        Field(
                            "labels",
                            3,
                            MESSAGE,
                            "GetSuggestionsReply.ParameterAssignments.LabelsEntry",
                            True,
                        ),
                    ],
                    nested=(_string_map("LabelsEntry"),),
                ),
            ),
        ),
        _message(
            "EarlyStoppingRule",
            [
                Field("name", 1),
                Field("value", 2),
                Field("comparison", 3, ENUM, "ComparisonType"),
                Field("start_step", 4, INT32),
            ],
        ),
        _message(
            "ValidateAlgorithmSettingsRequest", [Field("experiment", 1, MESSAGE, "Experiment")]
        ),
        _message("ValidateAlgorithmSettingsReply", []),
        _message(
            "ValidateEarlyStoppingSettingsRequest",
            [Field("early_stopping", 1, MESSAGE, "EarlyStoppingSpec")],
        ),
        _message("ValidateEarlyStoppingSettingsReply", []),
        _message(
            "GetEarlyStoppingRulesRequest",
            [
                Field("experiment", 1, MESSAGE, "Experiment"),
                Field("trials", 2, MESSAGE, "Trial", True),
                Field("db_manager_address", 3),
            ],
        ),
        _message(
            "GetEarlyStoppingRulesReply",
            [Field("early_stopping_rules", 1, MESSAGE, "EarlyStoppingRule", True)],
        ),
        *_db_manager_messages(),
    ]


def _db_manager_messages() -> list[descriptor_pb2.DescriptorProto]:
    """katib-db-manager's observation log (docs/katib-contract.md#db-manager)."""
    return [
        _message("MetricLog", [Field("time_stamp", 1), Field("metric", 2, MESSAGE, "Metric")]),
        _message("ObservationLog", [Field("metric_logs", 1, MESSAGE, "MetricLog", True)]),
        _message(
            "ReportObservationLogRequest",
            [Field("trial_name", 1), Field("observation_log", 2, MESSAGE, "ObservationLog")],
        ),
        _message("ReportObservationLogReply", []),
        _message(
            "GetObservationLogRequest",
            [
                Field("trial_name", 1),
                Field("metric_name", 2),
                Field("start_time", 3),
                Field("end_time", 4),
            ],
        ),
        _message(
            "GetObservationLogReply",
            [Field("observation_log", 1, MESSAGE, "ObservationLog")],
        ),
        _message("DeleteObservationLogRequest", [Field("trial_name", 1)]),
        _message("DeleteObservationLogReply", []),
    ]


PARAMETER_TYPES = ["UNKNOWN_TYPE", "DOUBLE", "INT", "DISCRETE", "CATEGORICAL"]
OBJECTIVE_TYPES = ["UNKNOWN", "MINIMIZE", "MAXIMIZE"]
COMPARISON_TYPES = ["UNKNOWN_COMPARISON", "EQUAL", "LESS", "GREATER"]
DISTRIBUTIONS = ["DISTRIBUTION_UNSPECIFIED", "UNIFORM", "LOG_UNIFORM", "NORMAL", "LOG_NORMAL"]
TRIAL_CONDITIONS = [
    "CREATED", "RUNNING", "SUCCEEDED", "KILLED", "FAILED", "METRICSUNAVAILABLE", "EARLYSTOPPED",
    "UNKNOWN",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Method:
    """One unary method: its path on the wire and its request and reply message names."""

    service: str
    name: str
    request: str
    reply: str

    @property
    def path(self) -> str:
        return f"/{PACKAGE}.{self.service}/{self.name}"


GET_SUGGESTIONS = Method(
    "Suggestion", "GetSuggestions", "GetSuggestionsRequest", "GetSuggestionsReply"
)
VALIDATE_ALGORITHM_SETTINGS = Method(
    "Suggestion",
    "ValidateAlgorithmSettings",
    "ValidateAlgorithmSettingsRequest",
    "ValidateAlgorithmSettingsReply",
)
VALIDATE_EARLY_STOPPING_SETTINGS = Method(
    "EarlyStopping",
    "ValidateEarlyStoppingSettings",
    "ValidateEarlyStoppingSettingsRequest",
    "ValidateEarlyStoppingSettingsReply",
)
GET_EARLY_STOPPING_RULES = Method(
    "EarlyStopping",
    "GetEarlyStoppingRules",
    "GetEarlyStoppingRulesRequest",
    "GetEarlyStoppingRulesReply",
)
METHODS = (
    GET_SUGGESTIONS,
    VALIDATE_ALGORITHM_SETTINGS,
    VALIDATE_EARLY_STOPPING_SETTINGS,
    GET_EARLY_STOPPING_RULES,
)
REPORT_OBSERVATION_LOG = Method(
    "DBManager", "ReportObservationLog", "ReportObservationLogRequest", "ReportObservationLogReply"
)
GET_OBSERVATION_LOG = Method(
    "DBManager", "GetObservationLog", "GetObservationLogRequest", "GetObservationLogReply"
)
DELETE_OBSERVATION_LOG = Method(
    "DBManager", "DeleteObservationLog", "DeleteObservationLogRequest", "DeleteObservationLogReply"
)
DB_MANAGER_METHODS = (REPORT_OBSERVATION_LOG, GET_OBSERVATION_LOG, DELETE_OBSERVATION_LOG)


def _file() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name=FILE_NAME, package=PACKAGE, syntax="proto3")
    proto.message_type.extend(_messages())
    proto.enum_type.extend(
        [
            _enum("ParameterType", PARAMETER_TYPES),
            _enum("ObjectiveType", OBJECTIVE_TYPES),
            _enum("ComparisonType", COMPARISON_TYPES),
            _enum("Distribution", DISTRIBUTIONS),
        ]
    )
    for service_name in ("Suggestion", "EarlyStopping", "DBManager"):
        service = proto.service.add(name=service_name)
        for method in (*METHODS, *DB_MANAGER_METHODS):
            if method.service == service_name:
                service.method.add(
                    name=method.name,
                    input_type=f".{PACKAGE}.{method.request}",
                    output_type=f".{PACKAGE}.{method.reply}",
                )
    return proto


def _classes(
    file: descriptor_pb2.FileDescriptorProto, pool: descriptor_pool.DescriptorPool
) -> dict[str, type[Message]]:
    """The file's message classes, built in ``pool``, by full name.

    ``GetMessages(..., pool=)`` is protobuf 4.22 to 7.x; 4.21 (which Katib's SDK admits) had
    only the factory's method of the same name, which later versions removed.
    """
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessages([file], pool=pool)
    pool.Add(file)
    factory: Any = message_factory.MessageFactory(pool)
    classes: dict[str, type[Message]] = factory.GetMessages([file.name])
    return classes


POOL = descriptor_pool.DescriptorPool()
CLASSES: dict[str, type[Message]] = {
    name.removeprefix(f"{PACKAGE}."): cls for name, cls in _classes(_file(), POOL).items()
}
"""The top-level message classes by name relative to the package (``"Trial"``)."""

Wire = dict[str, Any]
"""A message as a dictionary: protobuf's JSON mapping with the proto field names."""


def encode(message: str, value: Wire) -> bytes:
    """``value`` as the bytes of ``message``; a field the API does not have is a ``ParseError``."""
    return json_format.ParseDict(value, CLASSES[message]()).SerializeToString()


def decode(message: str, data: bytes) -> Wire:
    """The bytes of ``message`` as a dictionary; fields at their default value are left out."""
    parsed = CLASSES[message].FromString(data)
    return json_format.MessageToDict(parsed, preserving_proto_field_name=True)
