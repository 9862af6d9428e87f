"""The embedded runtime's models: each object parsed once per ``resourceVersion``.

``Parsed`` (the reconcile loop's) remembers the last 64 objects by identity, which a reconcile
that reads a thousand Trials overflows on every pass: a 1,000-trial run parsed 850,000 Trials,
half its time. In one process with one API server, an object's UID and ``resourceVersion`` name
its content exactly, so this cache keeps one model per object (and model type), replaced when
the version moves and dropped when the object is deleted (``forget``): its size is that of the
cluster, and a reconcile parses only what changed since the last one.

A new version of a Suggestion holds every assignment of the last one and a few more (Katib's
``status.suggestions`` only grows), so parsing it whole would cost what the history holds, on
every one of its writes. ``LONG_LISTS`` names such lists, as data; a new version whose list
starts with the list the last parse saw (compared at C speed: the API server's stored versions
share their items, so the comparison is mostly of identities) is parsed without that prefix,
and the model holds the raw items themselves (``_holding``). The result is the model a whole
parse gives (``tests/property/test_models_by_version.py`` holds the two together).
"""

from __future__ import annotations

from typing import Any, NamedTuple, cast

from pydantic import BaseModel

from katib_resume.app.loop.reconcile import ModelT, Parsed
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Suggestion

LONG_LISTS: dict[type[BaseModel], tuple[str, str]] = {Suggestion: ("status", "suggestions")}
"""Model type -> the (parent field, list field) of a list that grows from one version to the
next, by their JSON names (equal to the Python names here)."""


class _Entry(NamedTuple):
    version: str
    model: BaseModel
    items: list[Any] | None
    """A copy of the raw long list this model was parsed from (``None``: its type has none)."""


class ModelsByVersion(Parsed):
    def __init__(self) -> None:
        super().__init__()
        self.models: dict[str, dict[type[BaseModel], _Entry]] = {}

    def parse(self, model: type[ModelT], raw: Manifest) -> ModelT:
        meta = raw.get("metadata") or {}
        uid, version = meta.get("uid"), meta.get("resourceVersion")
        if not uid or not version:  # not (yet) from the API server: by identity
            return super().parse(model, raw)
        kept = self.models.setdefault(uid, {})
        entry = kept.get(model)
        if entry is None or entry.version != version:
            entry = kept[model] = _parsed(model, raw, version, entry)
        return cast(ModelT, entry.model)

    def forget(self, uid: str) -> None:
        """The object is gone: its models go too."""
        self.models.pop(uid, None)


def _parsed(model: type[BaseModel], raw: Manifest, version: str, last: _Entry | None) -> _Entry:
    """``raw`` parsed, reusing the part of ``last`` (its previous version) it starts with."""
    path = LONG_LISTS.get(model)
    items = None if path is None else _long_list(raw, path)
    if path is None or items is None:
        return _Entry(version, model.model_validate(raw), None)
    seen = None if last is None else last.items
    held = 0 if seen is None else len(seen)
    if last is None or not held or len(items) < held or items[:held] != seen:
        return _Entry(version, _holding(model.model_validate(raw), path, items), items[:])
    parent, field = path
    tail = model.model_validate({**raw, parent: {**raw[parent], field: items[held:]}})
    return _Entry(version, _holding(tail, path, items), items[:])


def _holding(parsed: BaseModel, path: tuple[str, str], items: list[Any]) -> BaseModel:
    """``parsed`` (validated whole, or from the tail it did not hold before) with the long list
    holding ``items`` themselves, the raw object's, in place of the validator's equal copies.

    The list's items are plain JSON objects (``dict[str, Any]``: validation copies them,
    changing nothing), so the model is the one a whole parse gives. Holding the stored items
    makes a status write that carries the list on (the Suggestion's ``[*held, *fresh]``)
    share them with the stored version, so the API server compares them by identity
    (``adapters.fake.store.as_json_over``) rather than item by item, key by key: the
    comparison costs the new items. Readers never mutate a model's items, as they never mutate
    the cache's objects."""
    parent, field = path
    inner = getattr(parsed, parent).model_copy(update={field: tuple(items)})
    return parsed.model_copy(update={parent: inner})


def _long_list(raw: Manifest, path: tuple[str, str]) -> list[Any] | None:
    parent = raw.get(path[0])
    value = parent.get(path[1]) if type(parent) is dict else None
    return value if type(value) is list else None
