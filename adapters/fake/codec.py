"""The JSON texts of the fake cluster's database (``sqlite.py``): objects, their heads, Events."""

from __future__ import annotations

import json
from typing import Any

import orjson

from katib_resume.adapters.fake.chained import Chained
from katib_resume.adapters.fake.lazy import head_of, plain
from katib_resume.core.manifest import Manifest


def encode(value: Any) -> str:
    """Compact JSON, by ``orjson`` (tens of times faster than ``json`` on a Suggestion holding
    thousands of assignments). What reaches here is already JSON (the store's ``as_json``
    refused NaN and non-string keys on the way in). An integer beyond 64 bits, which ``orjson``
    refuses, is written by ``json`` behind one leading space (still JSON), so that ``decode``
    reads it back exactly with ``json`` (``orjson`` would read it as a float). A Suggestion's
    assignments not decoded (``chained.py``) are written as their stored texts (by ``json``:
    decoded, as it writes a list).

    ``orjson`` turns whatever its ``default`` raises into its own ``TypeError``, a Ctrl-C too:
    SIGINT, SIGTERM and SIGHUP arrive as a ``KeyboardInterrupt`` between any two bytecodes,
    and ``_fragment`` runs Python (the assignments' texts joined, thousands of them), so an
    interrupt could land there and be taken for a value ``orjson`` cannot write: the fallback
    then wrote the object and the command went on, deaf to that signal. So anything but the
    ``TypeError`` of a value it cannot write is raised again, as it was raised."""
    value = plain(value)  # a stored object not read yet: ``orjson`` reads a dict's storage
    try:
        return orjson.dumps(value, default=_fragment).decode()
    except TypeError as error:
        cause = error.__cause__
        if cause is not None and not isinstance(cause, TypeError):
            raise cause from None  # the very exception ``default`` raised, as it was
        text = json.dumps(
            value, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_listed
        )
        return " " + text


def _fragment(value: Any) -> Any:
    """``orjson``'s hook for what it cannot write itself: assignments as their texts."""
    if isinstance(value, Chained):
        return orjson.Fragment(value.fragment())
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _listed(value: Any) -> Any:
    """``json``'s hook: assignments as the list they are (decoded)."""
    if isinstance(value, Chained):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def decode(text: str) -> Any:
    """The value ``encode`` wrote (``orjson`` reads it a few times faster than ``json``)."""
    return json.loads(text) if text[:1].isspace() else orjson.loads(text)


def encode_head(obj: Manifest) -> str | None:
    """The ``head`` of ``obj``'s row: its head as text, for a kind decoded when first read
    (``lazy.py``); ``None`` for any other (its body is decoded when the state is opened)."""
    head = head_of(obj)
    return None if head is None else encode(head)
