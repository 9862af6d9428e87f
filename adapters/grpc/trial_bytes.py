"""A request's Trials kept as the bytes of each ``Trial`` message, the rest decoded.

Katib's controller sends every Trial of the Experiment in every ``GetSuggestions`` and
``GetEarlyStoppingRules`` call (``suggestionclient.go``, ``ConvertTrials``): 5,000 Trials at
5,000, of which a few changed since the last call. Turning each into a dictionary (protobuf's
JSON mapping, walked in Python) cost about 25 µs a Trial, 0.13 s a call at 5,000. Parsing the
message is C (1.4 ms at 5,000), and so is serialising each Trial again with ``deterministic``
(map entries sorted by key, so Go's random map order gives the same bytes): about 0.7 µs a Trial.
Those bytes name the Trial's content, and the service decodes only the Trials whose bytes it
has not seen (``app/suggestion/trial_memo.py``), reading those from their messages
(``trial_message.py``).
"""

from __future__ import annotations

from operator import methodcaller

from google.protobuf import json_format

from katib_resume.adapters.grpc.api import CLASSES, Wire

TRIALS = "trials"
_CANONICAL = methodcaller("SerializeToString", deterministic=True)


def decode_keeping_trials(message: str, data: bytes) -> Wire:
    """``decode``, but a ``trials`` field is a list of each Trial's canonical bytes."""
    parsed = CLASSES[message].FromString(data)
    if TRIALS not in parsed.DESCRIPTOR.fields_by_name:
        return json_format.MessageToDict(parsed, preserving_proto_field_name=True)
    trials = list(map(_CANONICAL, getattr(parsed, TRIALS)))
    parsed.ClearField(TRIALS)
    wire = json_format.MessageToDict(parsed, preserving_proto_field_name=True)
    if trials:
        wire[TRIALS] = trials
    return wire
