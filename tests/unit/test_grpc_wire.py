"""Katib's wire format, checked byte by byte without our descriptor.

The round-trip property test cannot catch a wrong field number (encoder and decoder would
agree on it), so here a tiny independent protobuf reader walks the bytes we send, and bytes
written by hand are decoded by us: field numbers, wire types and enum values must be Katib's.
"""

from __future__ import annotations

import struct

from katib_resume.adapters.grpc.api import decode, encode

VARINT, I64, LEN = 0, 1, 2


def varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


def fields(data: bytes) -> dict[int, list[tuple[int, bytes | int]]]:
    """Field number -> [(wire type, payload)] of one message's top level."""
    found: dict[int, list[tuple[int, bytes | int]]] = {}
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        payload: bytes | int
        if wire == VARINT:
            payload, at = varint(data, at)
        elif wire == I64:
            payload, at = data[at : at + 8], at + 8
        else:
            assert wire == LEN, wire
            size, at = varint(data, at)
            payload, at = data[at : at + size], at + size
        found.setdefault(number, []).append((wire, payload))
    return found


def one(data: bytes, number: int) -> bytes | int:
    [(_, payload)] = fields(data)[number]
    return payload


def sub(data: bytes, number: int) -> bytes:
    payload = one(data, number)
    assert isinstance(payload, bytes)
    return payload


def tag(number: int, wire: int) -> bytes:
    return bytes([number << 3 | wire])


def ld(number: int, payload: bytes) -> bytes:
    return tag(number, LEN) + bytes([len(payload)]) + payload


def test_the_request_uses_katibs_field_numbers_and_enum_values() -> None:
    request = {
        "experiment": {
            "name": "exp",
            "spec": {
                "parameter_specs": {
                    "parameters": [
                        {
                            "name": "lr",
                            "parameter_type": "CATEGORICAL",
                            "feasible_space": {"max": "H", "min": "L", "list": ["a"], "step": "S"},
                        }
                    ]
                },
                "objective": {
                    "type": "MAXIMIZE",
                    "goal": 0.5,
                    "objective_metric_name": "acc",
                    "additional_metric_names": ["loss"],
                },
                "algorithm": {
                    "algorithm_name": "random",
                    "algorithm_settings": [{"name": "n", "value": "v"}],
                },
                "early_stopping": {"algorithm_name": "medianstop"},
                "parallel_trial_count": 3,
                "max_trial_count": 12,
            },
        },
        "trials": [
            {
                "name": "t",
                "spec": {
                    "objective": {"objective_metric_name": "acc"},
                    "parameter_assignments": {"assignments": [{"name": "lr", "value": "a"}]},
                    "labels": {"k": "v"},
                },
                "status": {
                    "start_time": "S",
                    "completion_time": "C",
                    "condition": "EARLYSTOPPED",
                    "observation": {"metrics": [{"name": "acc", "value": "0.9"}]},
                },
            }
        ],
        "current_request_number": 2,
        "total_request_number": 7,
    }
    data = encode("GetSuggestionsRequest", request)
    assert sorted(fields(data)) == [1, 2, 4, 5]
    assert (one(data, 4), one(data, 5)) == (2, 7)

    experiment = sub(data, 1)
    assert one(experiment, 1) == b"exp"
    spec = sub(experiment, 2)
    assert sorted(fields(spec)) == [1, 2, 3, 4, 5, 6]
    assert (one(spec, 5), one(spec, 6)) == (3, 12)
    parameter = sub(sub(spec, 1), 1)
    assert (one(parameter, 1), one(parameter, 2)) == (b"lr", 4)  # CATEGORICAL = 4
    space = sub(parameter, 3)
    assert [one(space, n) for n in (1, 2, 3, 4)] == [b"H", b"L", b"a", b"S"]
    objective = sub(spec, 2)
    assert one(objective, 1) == 2  # MAXIMIZE
    assert one(objective, 2) == struct.pack("<d", 0.5)
    assert (one(objective, 3), one(objective, 4)) == (b"acc", b"loss")
    algorithm = sub(spec, 3)
    assert one(algorithm, 1) == b"random"
    assert (one(sub(algorithm, 2), 1), one(sub(algorithm, 2), 2)) == (b"n", b"v")
    assert one(sub(spec, 4), 1) == b"medianstop"

    trial = sub(data, 2)
    assert one(trial, 1) == b"t"
    trial_spec = sub(trial, 2)
    assert sorted(fields(trial_spec)) == [2, 3, 4]
    assert one(sub(trial_spec, 2), 3) == b"acc"
    assignment = sub(sub(trial_spec, 3), 1)
    assert (one(assignment, 1), one(assignment, 2)) == (b"lr", b"a")
    label = sub(trial_spec, 4)  # a map entry: key = 1, value = 2
    assert (one(label, 1), one(label, 2)) == (b"k", b"v")
    status = sub(trial, 3)
    assert (one(status, 1), one(status, 2), one(status, 3)) == (b"S", b"C", 6)  # EARLYSTOPPED
    metric = sub(sub(status, 4), 1)
    assert (one(metric, 1), one(metric, 2)) == (b"acc", b"0.9")


def test_a_reply_written_by_hand_decodes() -> None:
    assignment = ld(1, b"lr") + ld(2, b"0.1")
    labels = ld(1, b"k") + ld(2, b"v")
    item = ld(1, assignment) + ld(2, b"trial-a") + ld(3, labels)
    rule = ld(1, b"loss") + ld(2, b"0.5") + tag(3, VARINT) + b"\x02" + tag(4, VARINT) + b"\x03"
    algorithm = ld(1, b"random") + ld(2, ld(1, b"seed") + ld(2, b"1"))
    data = ld(1, item) + ld(2, algorithm) + ld(3, rule)
    assert decode("GetSuggestionsReply", data) == {
        "parameter_assignments": [
            {
                "assignments": [{"name": "lr", "value": "0.1"}],
                "trial_name": "trial-a",
                "labels": {"k": "v"},
            }
        ],
        "algorithm": {
            "algorithm_name": "random",
            "algorithm_settings": [{"name": "seed", "value": "1"}],
        },
        "early_stopping_rules": [
            {"name": "loss", "value": "0.5", "comparison": "LESS", "start_step": 3}
        ],
    }


def test_validation_requests_carry_their_one_field() -> None:
    data = encode("ValidateAlgorithmSettingsRequest", {"experiment": {"name": "e"}})
    assert data == ld(1, ld(1, b"e"))
    data = encode(
        "ValidateEarlyStoppingSettingsRequest", {"early_stopping": {"algorithm_name": "m"}}
    )
    assert data == ld(1, ld(1, b"m"))
    assert encode("ValidateAlgorithmSettingsReply", {}) == b""


def space_bytes(distribution: str | int | None) -> bytes:
    """The ``FeasibleSpace`` bytes of a request whose one parameter has ``distribution``."""
    space: dict[str, object] = {"min": "1", "max": "9"}
    if distribution is not None:
        space["distribution"] = distribution
    parameter = {"name": "lr", "parameter_type": "DOUBLE", "feasible_space": space}
    experiment = {"spec": {"parameter_specs": {"parameters": [parameter]}}}
    data = encode("GetSuggestionsRequest", {"experiment": experiment})
    return sub(sub(sub(sub(sub(data, 1), 2), 1), 1), 3)


def test_a_distribution_is_field_5_a_varint_of_katibs_enum() -> None:
    numbers = {"UNIFORM": 1, "LOG_UNIFORM": 2, "NORMAL": 3, "LOG_NORMAL": 4}
    for name, number in numbers.items():
        space = space_bytes(name)
        assert fields(space)[5] == [(VARINT, number)], name
        assert space.endswith(tag(5, VARINT) + bytes([number])), "after max, min (field order)"
    # proto3: the zero value is not written, so unspecified and absent are the same bytes
    assert 5 not in fields(space_bytes("DISTRIBUTION_UNSPECIFIED"))
    assert space_bytes("DISTRIBUTION_UNSPECIFIED") == space_bytes(None)


def test_a_distribution_written_by_hand_decodes_and_an_unknown_number_is_kept() -> None:
    space = ld(1, b"9") + ld(2, b"1") + tag(5, VARINT) + b"\x02"
    assert decode("FeasibleSpace", space) == {"max": "9", "min": "1", "distribution": "LOG_UNIFORM"}
    # a number this API does not have (a newer Katib's) parses, and comes back as the number
    newer = ld(2, b"1") + tag(5, VARINT) + b"\x09"
    assert decode("FeasibleSpace", newer) == {"min": "1", "distribution": 9}
    assert encode("FeasibleSpace", decode("FeasibleSpace", newer)) == newer
