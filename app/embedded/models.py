"""The embedded runtime's models: each object parsed once per ``resourceVersion``.

``Parsed`` (the reconcile loop's) remembers the last 64 objects by identity, which a reconcile
that reads a thousand Trials overflows on every pass: a 1,000-trial run parsed 850,000 Trials,
half its time. In one process with one API server, an object's UID and ``resourceVersion`` name
its content exactly, so this cache keeps one model per object (and model type), replaced when
the version moves and dropped when the object is deleted (``forget``): its size is that of the
cluster, and a reconcile parses only what changed since the last one.

A Suggestion holds every assignment (Katib's ``status.suggestions`` only grows), and the
validator copies each of them, item by item and key by key, though a list of plain JSON objects
(``dict``s with ``str`` keys, as a JSON decoder makes them: the model's field is
``tuple[dict[str, Any], ...]``) comes out of it equal and unchanged: at 5,000 assignments,
0.6 ms on objects just read and 1.0 to 1.3 in a restart's first parse. ``LONG_LISTS`` names
such lists, as data. Their items are checked plain by C-level passes over their types and keys
(``_plain``), the rest of the object is validated with the list empty, and the model holds the
raw items themselves (``_holding``); a list that is not all plain is validated whole, as before.
A new version whose list starts with the list the last parse held (compared at C speed: the API
server's stored versions share their items, so the comparison is mostly of identities) checks
only the items after it. The result is the model a whole parse gives
(``tests/property/test_models_by_version.py`` holds the two together, for plain items and
others).

A writer's store hands a Suggestion's list over undecoded (a ``core.history.History``:
``adapters/fake/chained.py``), and the model holds it as it is, decoded only if something reads
its items: whether its items are plain is answered from their stored texts (``History.plain``:
a JSON object's text begins ``{``, and its keys are strings), and a next version's list is
recognised as extending the last one's by identity (``History.extends``), its new items alone
checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, cast

from pydantic import BaseModel, ValidationError

from katib_resume.app.loop.reconcile import ModelT, Parsed
from katib_resume.core.history import History, plain, starts_with
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Suggestion

LONG_LISTS: dict[type[BaseModel], tuple[str, str]] = {Suggestion: ("status", "suggestions")}
"""Model type -> the (parent field, list field) of a list that grows from one version to the
next, by their JSON names (equal to the Python names here)."""


class _Entry(NamedTuple):
    version: str
    model: BaseModel
    items: Sequence[Any] | None
    """A copy of the raw long list this model holds, or the ``History`` itself (immutable)
    (``None``: its type has none, or its items were not plain and the model holds the
    validator's copies)."""


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
    """``raw`` parsed: a long list of plain items held as it is, the rest validated (see the
    module docstring); the items of ``last`` (its previous version) it starts with are not
    checked again."""
    path = LONG_LISTS.get(model)
    items = None if path is None else _long_list(raw, path)
    if path is None or items is None:
        return _Entry(version, model.model_validate(raw), None)
    seen = None if last is None else last.items
    held = 0 if seen is None else len(seen)
    start = held if held and len(items) >= held and _starts(items, seen) else 0
    if not _plain(items, start):
        return _Entry(version, model.model_validate(raw), None)  # held: the validator's
    parent, field = path
    try:
        parsed = model.model_validate({**raw, parent: {**raw[parent], field: []}})
    except ValidationError:
        model.model_validate(raw)  # raises the whole parse's own error
        raise
    kept = items if isinstance(items, History) else list(items)
    return _Entry(version, _holding(parsed, path, items), kept)


def _starts(items: Sequence[Any], seen: Sequence[Any] | None) -> bool:
    """Whether ``items`` starts with ``seen`` (the last version's list): a ``History``
    proves it by identity or is taken as new (checked whole from its texts, at C speed,
    rather than decoded to be compared); a list is compared at C speed, mostly by identity."""
    if seen is None:
        return False
    if isinstance(items, History):
        return items.extends(seen)
    return starts_with(items, seen)


def _plain(items: Sequence[Any], start: int) -> bool:
    """Whether every item from ``start`` on is a ``dict`` whose keys are ``str`` (exactly: a
    subclass, or a ``bytes`` key, the validator converts), which the validator of
    ``dict[str, Any]`` copies without changing a key or a value: two C-level passes, over
    the items' types and over their keys' (``core.history.plain``: at 5,000 assignments 0.26
    ms on objects just read, 0.6 to 0.8 in a restart, where it is the first pass over them
    since they were decoded); of a ``History``, from its stored texts (``History.plain``)."""
    if isinstance(items, History):
        return items.plain(start)
    return plain(items[start:] if start else items)


def _holding(parsed: BaseModel, path: tuple[str, str], items: Sequence[Any]) -> BaseModel:
    """``parsed`` (validated with the long list empty) holding ``items`` themselves, the raw
    object's, in place of the validator's equal copies.

    The list's items are plain JSON objects (``_plain``: validation copies them, changing
    nothing), so the model is the one a whole parse gives. Holding the stored items
    makes a status write that carries the list on (the Suggestion's ``[*held, *fresh]``)
    share them with the stored version, so the API server compares them by identity
    (``adapters.fake.store.as_json_over``) rather than item by item, key by key: the
    comparison costs the new items. Readers never mutate a model's items, as they never mutate
    the cache's objects. A ``History`` is held as it is, in place of the field's tuple (a
    sequence compared equal to the tuple of its items), so that nothing decodes it unread."""
    parent, field = path
    held = items if isinstance(items, History) else tuple(items)
    inner = getattr(parsed, parent).model_copy(update={field: held})
    return parsed.model_copy(update={parent: inner})


def _long_list(raw: Manifest, path: tuple[str, str]) -> Sequence[Any] | None:
    parent = raw.get(path[0])
    value = parent.get(path[1]) if type(parent) is dict else None
    return value if type(value) is list or isinstance(value, History) else None
