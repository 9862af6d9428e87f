"""The JSON texts of the fake cluster's database (``sqlite.py``): objects, their heads, Events."""

from __future__ import annotations

import json
from typing import Any

import orjson

from katib_resume.adapters.fake.lazy import head_of, plain
from katib_resume.core.manifest import Manifest


def encode(value: Any) -> str:
    """Compact JSON, by ``orjson`` (tens of times faster than ``json`` on a Suggestion holding
    thousands of assignments). What reaches here is already JSON (the store's ``as_json``
    refused NaN and non-string keys on the way in). An integer beyond 64 bits, which ``orjson``
    refuses, is written by ``json`` behind one leading space (still JSON), so that ``decode``
    reads it back exactly with ``json`` (``orjson`` would read it as a float)."""
    value = plain(value)  # a stored object not read yet: ``orjson`` reads a dict's storage
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return " " + json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def decode(text: str) -> Any:
    """The value ``encode`` wrote (``orjson`` reads it a few times faster than ``json``)."""
    return json.loads(text) if text[:1].isspace() else orjson.loads(text)


def encode_head(obj: Manifest) -> str | None:
    """The ``head`` of ``obj``'s row: its head as text, for a kind decoded when first read
    (``lazy.py``); ``None`` for any other (its body is decoded when the state is opened)."""
    head = head_of(obj)
    return None if head is None else encode(head)
