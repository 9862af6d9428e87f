"""Parsing a Suggestion through ``ModelsByVersion`` (``app/embedded/models.py``: plain items held
as they are, not validated; a new version's tail checked alone) gives the model a whole parse
gives, whatever the next list is: longer, shorter, changed in the middle, absent, or holding
items that are not plain JSON objects (a key of a ``str`` subclass or of ``bytes``, which the
validator converts, a key it refuses, a ``dict`` subclass, not a ``dict`` at all): the same
model, of the same types throughout, or the same validation error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.fake.codec import decode, encode
from katib_resume.app.embedded.models import ModelsByVersion
from katib_resume.core.model import Suggestion


class _Text(str):
    """A key the validator turns into a plain ``str``."""

    __slots__ = ()


class _Object(dict[str, Any]):
    """An item the validator turns into a plain ``dict``."""


KINDS = ["plain", "plain", "plain", "text_key", "bytes_key", "int_key", "subclass", "list"]
"""How an item is made: mostly as a JSON decoder makes it, else one way or another not."""


def _assignment(number: int, value: str, kind: str = "plain") -> Any:
    values = [{"name": "lr", "value": value}]
    if kind == "list":
        return [f"t{number}", values]
    name: Any = {
        "text_key": _Text("name"),
        "bytes_key": b"name",
        "int_key": 1,
    }.get(kind, "name")
    item = {name: f"t{number}", "parameterAssignments": values, "labels": {"n": str(number)}}
    return _Object(item) if kind == "subclass" else item


def _raw(
    version: int, items: Sequence[Any] | None, extra: bool, broken: bool = False
) -> dict[str, Any]:
    status: dict[str, Any] = {"suggestionCount": version}
    if items is not None:
        status["suggestions"] = items
    if extra:
        status["someExtra"] = {"kept": version}
    raw = {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Suggestion",
        "metadata": {"name": "s", "namespace": "ns", "uid": "u1", "resourceVersion": str(version)},
        "spec": {"algorithm": {"algorithmName": "random"}, "requests": version},
        "status": status,
    }
    if broken:  # an error whose details hold the whole object, its list too
        del raw["spec"]
    return raw


def _shape(value: Any) -> Any:
    """``value`` with the type of every container and key spelled out: two values of one shape
    are the same JSON, of the same Python types (``==`` takes ``_Text("a")`` for ``"a"``)."""
    if isinstance(value, dict):
        return type(value), [(type(k), k, _shape(v)) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return type(value), [_shape(v) for v in value]
    return type(value), value


def _whole(raw: dict[str, Any]) -> Suggestion | list[Any]:
    """The whole parse, or its validation error's details."""
    try:
        return Suggestion.model_validate(raw)
    except ValidationError as error:
        return error.errors(include_url=False)


# each step: append n fresh items, drop the last n, change one in the middle, drop the list;
# with the object valid but now and then
steps = st.lists(
    st.tuples(
        st.sampled_from(["append", "append", "truncate", "change", "none"]),
        st.integers(0, 3),
        st.sampled_from(KINDS),
        st.sampled_from([False] * 7 + [True]),
    ),
    max_size=12,
)


@given(steps, st.booleans())
def test_a_version_parsed_from_its_tail_equals_its_whole_parse(
    history: list[tuple[str, int, str, bool]], extra: bool
) -> None:
    models = ModelsByVersion()
    items: list[Any] = []
    made = 0
    last: Suggestion | None = None
    for version, (step, n, kind, broken) in enumerate(history, start=1):
        held = items
        if step == "append":  # as the API server stores it: the old items themselves, then more
            items = items + [_assignment(made + i, "a", kind) for i in range(n)]
            made += n
        elif step == "truncate":
            items = items[: max(0, len(items) - n)]
        elif step == "change" and items:
            items = list(items)
            items[n % len(items)] = _assignment(n, "changed", kind)
        raw = _raw(version, None if step == "none" else items, extra, broken)
        whole = _whole(raw)
        if not isinstance(whole, Suggestion):  # refused: by the same error
            with pytest.raises(ValidationError) as refused:
                models.parse(Suggestion, raw)
            assert refused.value.errors(include_url=False) == whole
            last = None
            continue
        parsed = models.parse(Suggestion, raw)
        assert parsed == whole
        assert _shape(parsed.status.suggestions) == _shape(whole.status.suggestions)
        assert parsed.to_dict() == whole.to_dict()
        assert parsed.status.model_fields_set == whole.status.model_fields_set
        plain = all(type(item) is dict and all(type(k) is str for k in item) for item in items)
        if plain and step == "append" and last is not None and held:
            kept = last.status.suggestions
            assert all(a is b for a, b in zip(parsed.status.suggestions, kept, strict=False))
        if plain and step != "none":  # the raw items themselves: a write carrying them on
            assert all(a is b for a, b in zip(parsed.status.suggestions, items, strict=True))
        last = parsed
        if step == "none":
            items = []


def test_the_same_version_is_parsed_once() -> None:
    models = ModelsByVersion()
    raw = _raw(1, [_assignment(0, "a")], False)
    assert models.parse(Suggestion, raw) is models.parse(Suggestion, dict(raw))


STORED = ["plain", "plain", "plain", "int_key", "list"]
"""How an item a store holds as text is made (an ``int`` key is written as a string); one
appended since is JSON already (the store converted it: ``as_json``), a plain one or not."""


@given(steps, st.booleans())
def test_a_history_left_undecoded_parses_as_its_decoded_list(
    history: list[tuple[str, int, str, bool]], extra: bool
) -> None:
    """The list as a writer's store holds it (``adapters/fake/chained.py``): its stored texts,
    then the items a write appended. The model is the one a whole parse of the decoded list
    gives; one of plain items holds the history itself, undecoded."""
    models = ModelsByVersion()
    items: Chained = _texts([])
    made = 0
    for version, (step, n, drawn, broken) in enumerate(history, start=1):
        kind = STORED[KINDS.index(drawn) % len(STORED)]
        if step == "append":  # a status write: the stored list extended
            fresh = [_assignment(made + i, "a", kind) for i in range(n)]
            items = items.extended(decode(encode(fresh)))
            made += n
        elif step == "truncate":
            items = items[: max(0, len(items) - n)]
        elif step == "change" and len(items):
            listed = list(items)
            listed[n % len(listed)] = _assignment(n, "changed", kind)
            items = _texts(listed)  # a new chain
        raw = _raw(version, None if step == "none" else items, extra, broken)
        decoded = _raw(version, None if step == "none" else decode(encode(items)), extra, broken)
        whole = _whole(decoded)
        if not isinstance(whole, Suggestion):
            with pytest.raises(ValidationError) as refused:
                models.parse(Suggestion, raw)
            assert refused.value.errors(include_url=False) == whole
            continue
        parsed = models.parse(Suggestion, raw)
        assert parsed == whole and whole == parsed
        held: Sequence[Any] = parsed.status.suggestions
        assert _shape(list(held)) == _shape(list(whole.status.suggestions))
        assert parsed.to_dict() == whole.to_dict()
        assert parsed.status.model_fields_set == whole.status.model_fields_set
        if step != "none" and items.plain():  # (a text ``json`` wrote, behind a space, not)
            assert held is items
        if step == "none":
            items = _texts([])


def _texts(items: list[Any]) -> Chained:
    return Chained.of(Texts([encode(item) for item in items]), len(items))


def test_a_history_stored_anew_is_checked_whole() -> None:
    """A version whose list is a new chain (an item changed) is not taken for an extension
    of the last one, however long: an item made not plain anywhere is found, and the parse
    refuses it as the whole parse does."""
    models = ModelsByVersion()
    plain = [_assignment(i, "a") for i in range(4)]
    first = _raw(1, _texts(plain), False)
    assert models.parse(Suggestion, first) == Suggestion.model_validate(_raw(1, plain, False))
    changed = [_assignment(0, "a", "list"), *plain[1:], _assignment(9, "a")]
    whole = _whole(_raw(2, changed, False))
    assert not isinstance(whole, Suggestion)
    with pytest.raises(ValidationError) as refused:
        models.parse(Suggestion, _raw(2, _texts(changed), False))
    assert refused.value.errors(include_url=False) == whole
