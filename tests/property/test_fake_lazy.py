"""A stored Trial decoded when first read (``adapters.fake.lazy``) answers every read as the
plain object would, whichever read comes first, and is handed to ``orjson``, ``marshal`` (the
store's copies) and ``pydantic`` whole."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.clone import clone
from katib_resume.adapters.fake.codec import encode
from katib_resume.adapters.fake.lazy import DamagedObject, Decoded, Undecoded, head_of, plain
from katib_resume.adapters.fake.store import as_json
from katib_resume.core.model import Trial

leaves = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["a", "b"]), st.booleans())
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["x", "y"]), inner)
    ),
    max_leaves=8,
)
trials = st.builds(
    lambda meta, rest: (
        {"apiVersion": "kubeflow.org/v1beta1", "kind": "Trial", "metadata": meta} | rest
    ),
    st.fixed_dictionaries(
        {"name": st.sampled_from(["t0", "t1"]), "resourceVersion": st.sampled_from(["1", "2"])}
    ),
    st.dictionaries(st.sampled_from(["spec", "status", "extra"]), values, max_size=3),
)
READS: dict[str, Callable[[dict[str, Any], dict[str, Any]], Any]] = {
    "status": lambda o, _: _item(o, "status"),
    "missing": lambda o, _: _item(o, "nothing"),
    "in": lambda o, _: ("kind" in o, "spec" in o, "nothing" in o),
    "get": lambda o, _: o.get("spec", "none"),
    "len": lambda o, _: len(o),
    "list": lambda o, _: list(o),
    "reversed": lambda o, _: list(reversed(o)),
    "items": lambda o, _: list(o.items()),
    "values": lambda o, _: list(o.values()),
    "unpacked": lambda o, _: {**o},
    "dict": lambda o, _: dict(o),
    "copy": lambda o, _: o.copy(),
    "or": lambda o, _: o | {"z": 1},
    "ror": lambda o, _: {"z": 1} | o,
    "equal": lambda o, other: (o == other, other == o, o != other, other != o),
    "repr": lambda o, _: repr(o),
    "json": lambda o, _: json.dumps(o),
    "encode": lambda o, _: encode(o),
    "clone": lambda o, _: clone(o),
    "deepcopy": lambda o, _: copy.deepcopy(plain(o)),
    "pickle": lambda o, _: pickle.loads(pickle.dumps(o)),
    "as_json": lambda o, _: as_json(o),
}


def _item(obj: dict[str, Any], key: str) -> Any:
    try:
        return obj[key]
    except KeyError as error:
        return f"KeyError {error}"


def _stored(obj: dict[str, Any]) -> Undecoded:
    head = head_of(obj)
    assert head is not None
    return Undecoded(orjson.loads(encode(head)), encode(obj))


@given(trials, st.lists(st.sampled_from(sorted(READS)), min_size=1, max_size=4), trials)
def test_every_read_answers_as_the_plain_object_would(
    obj: dict[str, Any], reads: list[str], other: dict[str, Any]
) -> None:
    stored, others = _stored(obj), [_stored(other), _stored(other), other]
    for name in reads:
        for compared in others:
            assert READS[name](stored, compared) == READS[name](obj, other)
    assert type(stored) is Decoded  # read: every method a dict's from now on
    assert stored == obj and list(stored) == list(obj)
    assert orjson.dumps(stored) == orjson.dumps(obj)


@given(trials, trials)
def test_two_unread_objects_compare_as_the_plain_ones(one: dict[str, Any], two: Any) -> None:
    assert (_stored(one) == _stored(two)) == (one == two)
    assert (_stored(one) != _stored(two)) == (one != two)


@given(trials)
def test_the_head_is_read_without_the_body(obj: dict[str, Any]) -> None:
    stored = _stored(obj)
    assert stored["metadata"] == obj["metadata"] and stored["kind"] == "Trial"
    assert type(stored) is Undecoded


def test_an_unread_trial_is_parsed_whole() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Trial",
        "metadata": {"name": "t", "namespace": "ns"},
        "spec": {"primaryContainerName": "main"},
    }
    assert Trial.model_validate(_stored(obj)) == Trial.model_validate(obj)


def test_only_a_trial_whose_first_fields_are_its_head_has_one() -> None:
    head = {"apiVersion": "v", "kind": "Trial", "metadata": {"name": "t"}}
    assert head_of({**head, "spec": {}}) == head
    assert head_of({"kind": "Trial", "apiVersion": "v", "metadata": {"name": "t"}}) is None
    assert head_of({**head, "kind": "Experiment"}) is None


@pytest.mark.parametrize("body", ["[1, 2]", "{not json"])
def test_a_damaged_body_is_refused_when_first_read(body: str) -> None:
    stored = Undecoded({"apiVersion": "v", "kind": "Trial", "metadata": {"name": "t"}}, body)
    assert stored["metadata"] == {"name": "t"}
    with pytest.raises(DamagedObject, match="a stored Trial 't'"):
        stored.get("spec")
