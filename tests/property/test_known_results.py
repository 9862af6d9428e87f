"""The results by index an algorithm reads (``Known``, mapped lazily) equal, read in every way,
the table mapped from scratch from every result: names issued twice (the last index counts),
results of Trials not ours, failed Trials (``None``), names added to the index after the view
was made (one of them, now and then, a name issued before: the later index counts), lookups in
any order (each maps the names from its index on), past either end and of keys that are not
indexes; and a NaN reads as a failed Trial, ±inf as itself (``nonfinite.admitted``), whichever
way it is read."""

from __future__ import annotations

import math
from random import Random
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.fake.codec import encode
from katib_resume.adapters.local.suggestion import encoded, known
from katib_resume.adapters.local.suggestion.assignments import Index, assignment
from katib_resume.adapters.local.suggestion.known import Known, Names
from katib_resume.adapters.local.suggestion.nonfinite import admitted

names = st.lists(st.sampled_from([f"t{k}" for k in range(12)]), max_size=10)
results = st.dictionaries(
    st.sampled_from([f"t{k}" for k in range(16)]),
    st.none() | st.floats(),
    max_size=14,
)


def _from_scratch(
    issued: list[str], given: dict[str, float | None], added: list[str]
) -> dict[int, float | None]:
    """Every result by the index of its name (a name issued twice: its last index), among the
    indexes of ``issued`` (a view of them: an added name counts only against them)."""
    last = {name: index for index, name in enumerate(issued + added)}
    return {
        last[name]: admitted(value)
        for name, value in given.items()
        if name in last and last[name] < len(issued)
    }


@given(
    issued_names=names,
    given_results=results,
    added=st.lists(st.sampled_from([f"t{k}" for k in range(10, 16)]), max_size=3, unique=True),
    order=st.randoms(use_true_random=False),
    tail=st.sampled_from([0, 1, 3, known.TAIL]),
    stored=st.booleans(),
)
@example(  # as many results as assignments issued
    issued_names=["t0", "t0"],
    given_results={"t0": None, "t12": None},
    added=["t12"],
    order=Random(0),
    tail=0,
    stored=False,
)
@example(  # a NaN: a failed Trial
    issued_names=["t0", "t1"],
    given_results={"t0": math.nan, "t1": math.inf},
    added=[],
    order=Random(0),
    tail=0,
    stored=False,
)
def test_every_reading_equals_the_table_from_scratch(
    *,
    issued_names: list[str],
    given_results: dict[str, float | None],
    added: list[str],
    order: Random,
    tail: int,
    stored: bool,
) -> None:
    """With the names mapped from an index on in steps of every size (``TAIL``), of
    assignments held as objects or as a store's texts (``stored``: a ``History``, whose
    names are read from its texts)."""
    kept, known.TAIL = known.TAIL, tail
    try:
        _every_reading(issued_names, given_results, added, order, stored)
    finally:
        known.TAIL = kept


def _every_reading(
    issued_names: list[str],
    results: dict[str, float | None],
    added: list[str],
    order: Random,
    stored: bool,
) -> None:
    items = [assignment(name, (("lr", "1"),)) for name in issued_names]
    index = Index.of(_stored(items) if stored else tuple(items))
    lookups, whole = index.known(results), index.known(results)
    for number, name in enumerate(added):  # the server indexes its new assignments after
        index.names[name] = len(issued_names) + number
    expected = _from_scratch(issued_names, results, added)
    probes: list[Any] = [*range(-2, len(issued_names) + len(added) + 2), "t1", 1.0, None]
    order.shuffle(probes)
    for key in probes:  # lookups first: the table is not mapped yet
        assert (key in lookups) == (key in expected)
        assert lookups.get(key, "absent") == expected.get(key, "absent")
    assert list(whole) == list(expected)  # the same order as the results'
    assert len(whole) == len(expected)
    assert dict(whole.items()) == expected and list(whole.values()) == list(expected.values())
    assert whole == expected and lookups == whole and dict(lookups) == expected
    for key in probes:  # and once the table is mapped
        assert (key in whole) == (key in expected)
        assert whole.get(key, "absent") == expected.get(key, "absent")


def test_a_lookup_maps_nothing_but_what_it_reads() -> None:
    """The random search reads no result, hyperband and PBT one rung or pool: the table of
    every result is not built for them, nor the map of every name."""
    issued = tuple(assignment(f"t{k}", (("lr", "1"),)) for k in range(5))
    known = Known(issued, Names(issued), {"t3": 0.5, "t1": None, "x": 1.0})
    assert known[3] == 0.5 and known.get(1, "absent") is None and 4 not in known
    assert known._table is None and known._names._map is None  # nor the map of every name
    assert list(known) == [3, 1] and known._table == {3: 0.5, 1: None}


def _stored(items: list[Any]) -> Any:
    """``items`` as a writer's store holds them: their texts, decoded when read."""
    return Chained.of(Texts([encode(item) for item in items]), len(items))


@given(st.lists(st.sampled_from(["t1", "t2", 'q"', "\\", "é"]), max_size=8), st.data())
def test_a_stored_historys_names_are_mapped_without_decoding_it(
    issued_names: list[str], data: st.DataObject
) -> None:
    """The map of every name, and the names from an index on, of assignments held as a
    store's texts are the map of the items' names (a name issued twice at its last index),
    read from the texts (``History.names``): none decoded, unless a text escapes a name."""
    issued = _stored([assignment(name, (("lr", "1"),)) for name in issued_names])
    expected = {name: index for index, name in enumerate(issued_names)}
    names = Names(issued)
    for at in data.draw(st.lists(st.integers(0, len(issued_names)), max_size=3), label="at"):
        probe = issued_names[at] if at < len(issued_names) else "absent"
        assert names.at(probe, at) == (expected.get(probe) == at)
    assert names.mapping() == expected
    if not any(map(set('"\\').intersection, issued_names)):
        assert issued._texts._read[0] == len(issued_names) and not issued._texts._alone


@given(
    st.lists(st.sampled_from(["t1", "t12", 'q"', "\\", "é", "x0"]), max_size=6),
    st.lists(st.sampled_from(["t1", "t2", "é"]), max_size=2),
    st.lists(st.sampled_from(["t1", "t12", "t2", 'q"', "\\", "é", "x0", "lr", "1"]), max_size=12),
    st.booleans(),
)
def test_a_name_is_taken_as_the_map_says(
    issued_names: list[str], added: list[str], probes: list[str], saved: bool
) -> None:
    """Answered from the saved bytes (names that are others' prefixes, quotes, escapes, a
    parameter's name or value) or from the map, a name is taken exactly when the map holds
    it; and the map, built after names were added, is the map of them all."""
    issued = tuple(assignment(name, (("x0", "1"), ("lr", "t1"))) for name in issued_names)
    if saved:
        body = b",".join(encoded.canonical(item) for item in issued)
        encoded.remember(("test", len(issued), saved), issued, body)
    names = Names(issued)
    for number, name in enumerate(added):
        names[name] = len(issued) + number
    expected = {name: index for index, name in enumerate(issued_names + added)}
    for name in probes:
        assert (name in names) == (name in expected)
    assert names.mapping() == expected and names.added == len(added)
