"""A stored Trial decoded when it is first read, not when the state is opened.

A restart opens every live object, and at 5,000 Trials decoding their bodies was the largest
part of opening the state (about 45 of 100 ms), though a restart reads nothing of a settled
Trial but its metadata: the store's and the informer's indexes (kind, labels, owners, UID,
``resourceVersion``), and the kept summaries' matches by name and version. So a Trial's row
also holds its head (``apiVersion``, ``kind``, ``metadata``) as a JSON text of its own
(``sqlite.py``); opening decodes the head only, and the object is an ``Undecoded``: a ``dict``
holding the head, with the whole body's text kept beside it. The first read of anything else
(a field it does not hold yet, by subscript, ``get`` or ``in``; iteration, ``len``, ``==``, a
copy) decodes the body into it and turns it into a ``Decoded``, a ``dict`` in all but its class
(no method of its own, so every read after costs what a plain ``dict``'s does).

Code that reads a ``dict`` without its methods sees only its storage: ``orjson`` and ``marshal``
do (``codec.encode`` and ``clone.clone`` hand them ``plain`` objects; ``pydantic`` looks keys up
through the mapping's methods). A body that cannot be decoded is refused when first read
(``DamagedObject``), as a state that cannot be read is at open (``persistence``).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

HEAD = ("apiVersion", "kind", "metadata")
"""The fields a head holds, in this order (a row's head is kept only for an object whose first
fields they are: ``head_of``)."""
DEFERRED = frozenset({"Trial"})
"""The kinds whose bodies are decoded when first read: the history (a handful of every other
kind per Experiment is decoded at open, so damage to one is found there)."""


class DamagedObject(ValueError):
    """A stored body decoded when first read could not be (its state's file is damaged)."""


class Decoded(dict[str, Any]):
    """A stored object whose body has been decoded: a ``dict`` but for its class. (The base
    of ``Undecoded``, so that comparing one with the other asks ``Undecoded`` first.)"""

    __slots__ = ("_body",)
    _body: str | None

    def __reduce_ex__(self, protocol: Any) -> Any:
        """A copy (``pickle``, ``copy``) is a plain ``dict`` (of every field: see ``plain``)."""
        return dict, (dict(self),)


def head_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    """``obj``'s head if its kind is ``DEFERRED`` and ``HEAD`` are its first fields."""
    if obj.get("kind") not in DEFERRED or tuple(obj)[:3] != HEAD:
        return None
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": obj["metadata"]}


def plain(obj: Any) -> Any:
    """``obj`` itself, or a plain ``dict`` of a stored object's fields (read if not yet)."""
    return dict(obj) if isinstance(obj, Decoded) else obj


class Undecoded(Decoded):
    """A stored object holding its head only, until anything else of it is read."""

    __slots__ = ()

    def __init__(self, head: dict[str, Any], body: str) -> None:
        dict.__init__(self, head)
        self._body = body

    def __missing__(self, key: str) -> Any:
        _read(self)
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the head without reading the body (``obj.get("metadata")``)."""
        if not dict.__contains__(self, key):
            _read(self)
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        if not dict.__contains__(self, key):
            _read(self)
        return dict.__contains__(self, key)

    def __eq__(self, other: object) -> bool:
        _read(self)
        if isinstance(other, Undecoded):
            _read(other)  # ``dict``'s comparison reads the other's storage
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]


READ_FIRST = (
    "__iter__",
    "__reversed__",
    "__len__",
    "keys",
    "values",
    "items",
    "__repr__",
    "copy",
    "__or__",
    "__ror__",
    "__ior__",
    "__setitem__",
    "__delitem__",
    "setdefault",
    "pop",
    "popitem",
    "update",
    "clear",
)
"""The ``dict`` methods an ``Undecoded`` answers as a ``dict`` does once its body is read
(every one that reads or writes more than one field it may not hold yet)."""


def _read_first(name: str) -> Any:
    """``dict``'s method ``name``, called once the body is read (the object is a ``Decoded``
    after that, whose methods are ``dict``'s own: this wrapper runs once per object)."""
    method = getattr(dict, name)

    def read_first(self: Undecoded, *args: Any, **kwargs: Any) -> Any:
        _read(self)
        return method(self, *args, **kwargs)

    read_first.__name__ = read_first.__qualname__ = name
    return read_first


for _method in READ_FIRST:
    setattr(Undecoded, _method, _read_first(_method))


def _read(obj: Undecoded) -> None:
    """Decode ``obj``'s body into it and make it a ``Decoded``: the body's fields in its
    order, with the head's ``metadata`` (equal to the body's own, and perhaps already held by a
    reader or an index). A function, not a method, and a no-op once done: another thread's read
    meanwhile sees the head whole, decodes the same body itself, or finds it done."""
    text = obj._body
    if text is None:
        return
    try:  # a text behind a space was written by ``json`` (``codec.encode``)
        body = json.loads(text) if text[:1].isspace() else orjson.loads(text)
    except ValueError as error:
        raise DamagedObject(f"a stored {_name(obj)} cannot be decoded: {error}") from None
    if type(body) is not dict:
        raise DamagedObject(f"a stored {_name(obj)} is not an object")
    body["metadata"] = dict.__getitem__(obj, "metadata")
    dict.update(obj, body)  # the head's fields are the body's first (``head_of``): in place
    object.__setattr__(obj, "__class__", Decoded)  # the same layout: allowed
    obj._body = None


def _name(obj: dict[str, Any]) -> str:
    return f"{dict.get(obj, 'kind')} {dict.__getitem__(obj, 'metadata').get('name')!r}"
