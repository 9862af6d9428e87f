"""The bulk readings of a restart read as the one-by-one ones: ``columns`` as ``parse``,
``all_well_formed`` as ``well_formed``, ``Index.of`` as ``key_of``, and the state file's split
parse (``orjson`` for the assignments) as ``json``."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import columns
from katib_resume.adapters.local.suggestion import state as store
from katib_resume.adapters.local.suggestion.assignments import (
    Index,
    all_well_formed,
    assignment,
    key_of,
    well_formed,
)
from katib_resume.adapters.local.suggestion.optuna_space import parse
from katib_resume.adapters.local.suggestion.space import Parameter, SearchSpace

decimals = st.decimals(-10, 10, places=2)
bounds = st.tuples(decimals, decimals).map(sorted)
number_texts = st.one_of(
    st.floats(-12, 12).map(repr),
    st.integers(-12, 12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.decimals(-11, 11, places=25).map(str),
    st.sampled_from(["1e-400", "0.10000000000000000001", "1_0", " 2.5", "3.0", "+3", "nan", "x"]),
    st.text(max_size=4),
)


@st.composite
def parameters(draw: st.DrawFn) -> tuple[Parameter, str]:
    kind = draw(st.sampled_from(["double", "stepped double", "int", "categorical"]))
    low, high = draw(bounds)
    if kind == "categorical":
        choices = draw(st.lists(st.text(max_size=3), min_size=1, max_size=4, unique=True))
        return Parameter("p", "categorical", choices=tuple(choices)), ""
    if kind == "int":
        every = Decimal(draw(st.integers(1, 3)))
        low, high = low.to_integral_value(), max(low, high).to_integral_value()
        scale = "logUniform" if draw(st.booleans()) and low > 0 else ""
        return Parameter("p", "int", low=low, high=high, step=every), scale
    step = draw(st.sampled_from([Decimal("0.25"), Decimal("1.5")])) if kind != "double" else None
    scale = "" if step else draw(st.sampled_from(["", "logUniform"]))
    return Parameter("p", "double", low=low, high=high, step=step), scale


@given(parameter=parameters(), data=st.data())
def test_a_column_reads_as_parse_reads_each_value(
    parameter: tuple[Parameter, str], data: st.DataObject
) -> None:
    """Texts of every kind, and (most often, as on a restart) only our own renderings."""
    p, scale = parameter
    own = st.integers(0, (p.count or 1) - 1).map(p.value) if p.count else number_texts
    texts = data.draw(st.lists(own if data.draw(st.booleans()) else number_texts | own))
    expected = [parse(p, scale, t) for t in texts]
    assert columns.read_column(p, scale, texts) == expected
    assert list(map(type, columns.read_column(p, scale, texts))) == list(map(type, expected))


@example(texts=["1.5", "nan"]).via("a NaN compares as inside any bounds")
@example(texts=["1.5", "2.0", "1e400"]).via("infinity")
@example(texts=["1.5", "1.500", " 2", "1_0"]).via("other spellings of numbers")
@given(texts=st.lists(number_texts))
def test_a_continuous_column_reads_as_parse(texts: list[str]) -> None:
    p = Parameter("p", "double", low=Decimal(-3), high=Decimal(12))
    for scale in ("", "logUniform"):
        assert columns.read_column(p, scale, texts) == [parse(p, scale, t) for t in texts]


@given(values=st.lists(st.tuples(number_texts, number_texts, st.sampled_from("ab"))))
def test_points_read_as_each_is_read(values: list[tuple[str, str, str]]) -> None:
    x = Parameter("x", "double", low=Decimal(-5), high=Decimal(5))
    y = Parameter("y", "int", low=Decimal(0), high=Decimal(10), step=Decimal(1))
    z = Parameter("z", "categorical", choices=("a", "b"))
    space = SearchSpace((x, y, z))
    points = [(("x", a), ("y", b), ("z", c)) for a, b, c in values]
    expected = []
    for a, b, c in values:
        read = (parse(x, "", a), parse(y, "", b), parse(z, "", c))
        expected.append(None if None in read else dict(zip("xyz", read, strict=True)))
    assert columns.params_of(space, points) == expected


def test_points_naming_other_parameters_are_left_to_the_caller() -> None:
    space = SearchSpace((Parameter("x", "categorical", choices=("a",)),))
    assert columns.params_of(space, [(("x", "a"),), (("y", "a"),)]) is None
    assert columns.params_of(space, [(("x", "a"),), (("x", "a"), ("x", "a"))]) is None
    assert columns.params_of(space, []) == []


leaves = st.one_of(st.none(), st.integers(), st.text(max_size=3), st.booleans())
shapes = st.one_of(
    st.builds(
        assignment, st.text(max_size=3), st.lists(st.tuples(st.text(), st.text())).map(tuple)
    ),
    st.dictionaries(st.sampled_from(["name", "parameterAssignments", "labels"]), leaves),
    st.fixed_dictionaries(
        {
            "name": st.text(max_size=2) | leaves,
            "parameterAssignments": st.lists(
                st.dictionaries(st.sampled_from(["name", "value", "x"]), leaves | st.text())
            )
            | leaves,
        }
    ),
    leaves,
)


@given(items=st.lists(shapes, max_size=5))
def test_all_well_formed_is_every_item_well_formed(items: list[Any]) -> None:
    assert all_well_formed(items) == all(map(well_formed, items))
    if all_well_formed(items):
        index = Index.of(tuple(items))
        keys = [key_of(m) for m in items]
        assert index.points == [p for _, p in keys]
        assert index.names.mapping() == {name: i for i, (name, _) in enumerate(keys)}


tricky = st.sampled_from(['],"seed":', ',"issued":[', "issued", '"', "\\", "\ud800", "é", "9" * 25])
words = st.text(max_size=4) | tricky


@given(
    seed=st.integers() | st.integers(2**63, 2**80) | st.integers(-(2**80), -(2**63)),
    cursor=st.recursive(
        # a cursor is a JSON value: no infinity (the searches keep one as text: ``nonfinite``)
        st.none()
        | st.integers(-(2**70), 2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | words,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(words, inner, max_size=3),
        max_leaves=6,
    ),
    items=st.lists(st.builds(assignment, words, st.lists(st.tuples(words, words)).map(tuple))),
    space=words,
)
def test_a_state_file_reads_back_as_json_reads_it(
    seed: int, cursor: Any, items: list[Any], space: str
) -> None:
    state = store.SearchState("ns/e", "tpe", seed, space, cursor, tuple(items))
    data = store.encode(state)
    assert store.decode(data) == state
    document = json.loads(data)
    assert store.decode(data).cursor == document["payload"]["cursor"]
    assert type(store.decode(data).seed) is int


def test_a_cursor_holding_the_assignments_marker_reads_back() -> None:
    """A key ``issued`` holding a list inside the cursor writes the marker the assignments are
    found by before the payload's own: the cut there is no JSON, so the file is parsed whole."""
    cursor = {"a": 1, "issued": [{"name": "x", "parameterAssignments": []}], "z": {"issued": []}}
    items = (assignment("n", (("p", "1"),)),)
    state = store.SearchState("ns/e", "tpe", 1, "s", cursor, items)
    data = store.encode(state)
    assert data.find(b',"issued":[') < data.rfind(b',"issued":[')
    assert store.decode(data) == state
