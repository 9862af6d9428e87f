"""A rebuild's results by trial number and its best trial, read by NumPy passes over a column of
doubles (``told_column.py``, ``column.py``), equal those read result by result: told results of
every kind a cursor keeps (numbers of either sign, ``None`` for a failure, the infinities,
equal values told twice), running trials anywhere (inside the column, and after its end),
assignments that are no trial, and entries past the assignments; and so do the running trials
(``untold_of``), the count of complete trials and the questions a sampler's rows ask (``None``
or ``UNTOLD`` in the results, counted). The column packed as the volume keeps it reads back
bit for bit. A format 3 ``told`` (a dict by index text) and a format 4 to 6 list become the
column that reads as they read, and a column set entry by entry (``told_with``) is the column
of all the results told; the journal's record of each step, found from the places
``told_with`` notes, is the one a pass over the whole column finds, and turns the column
before into the one after."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import cursor_delta
from katib_resume.adapters.local.suggestion import told_column as told
from katib_resume.adapters.local.suggestion.column import PACKED, UNTOLD_TEXT, Column
from katib_resume.adapters.local.suggestion.live_study import UNTOLD, best_of, count_complete
from katib_resume.adapters.local.suggestion.nonfinite import value_of
from tests.property.test_cursor_delta_noted import scanned

kept_values = st.one_of(
    st.none(),
    st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, 7]),
    st.floats(-10, 10),
    st.sampled_from(["inf", "-inf"]),
)
columns = st.lists(st.one_of(st.just(UNTOLD), kept_values), max_size=12)


def _one_by_one(column: list[Any]) -> list[Any]:
    return [r if r is UNTOLD else value_of(r) for r in column]


def _saved(column: list[Any]) -> list[Any]:
    """The column as a cursor keeps it: ``UNTOLD_TEXT`` for no result, ending at the last told."""
    saved = [UNTOLD_TEXT if r is UNTOLD else r for r in column]
    while saved and saved[-1] == UNTOLD_TEXT:
        saved.pop()
    return saved


@given(columns, st.integers(0, 3), st.lists(kept_values, max_size=2), st.data())
@example([1.0, UNTOLD, 1.0, None], 0, [], None)  # equal values: the first trial that has it
@example(["inf", 3.0, "-inf"], 2, [-100.0], None)  # an entry past the assignments: not read
@example([UNTOLD, UNTOLD], 0, [], None)  # nothing told: no best
@example([UNTOLD], 0, [None], None)  # a stray after a running trial: still past it
def test_results_and_the_best_trial_equal_those_read_one_by_one(
    column: list[Any], later: int, strays: list[Any], data: Any
) -> None:
    whole = column + [UNTOLD] * later  # assignments after the column's end: untold
    saved = _saved(column)
    if strays and not later:  # entries past the assignments: after every one of them
        saved = _saved(column) + [UNTOLD_TEXT] * (len(column) - len(saved)) + strays
    kept: Any = range(len(whole))
    if data is not None:
        kept = (
            data.draw(
                st.one_of(st.just(kept), st.lists(st.sampled_from(kept), unique=True).map(sorted))
            )
            if whole
            else kept
        )
    column_read = Column.unpacked(Column.of(saved).packed()[PACKED])  # as a restart reads it
    assert column_read == Column.of(saved)
    assert column_read.entries() == saved
    results = told.results_of(column_read, kept, len(whole))
    expected = [_one_by_one(whole)[i] for i in kept]
    assert list(results) == expected
    assert [results[n] for n in range(len(expected))] == expected  # one at a time
    for kind in (None, UNTOLD):
        assert (kind in results) == (kind in expected)
        assert results.count(kind) == expected.count(kind)
    untold = expected.count(UNTOLD)
    running = told.untold_of(kept, results)
    assert running == {index for index, r in zip(kept, expected, strict=True) if r is UNTOLD}
    assert told.complete_of(results, untold) == count_complete(expected)
    for maximize in (False, True):
        assert told.best(results, maximize) == best_of(expected, maximize)


@given(
    columns,
    st.dictionaries(st.sampled_from(["x", "99", "-1", "01", "1.0"]), kept_values, max_size=3),
)
def test_a_format_3_dict_becomes_the_column_it_read_as(
    column: list[Any], strays: dict[str, Any]
) -> None:
    keyed = {str(n): r for n, r in enumerate(column) if r is not UNTOLD}
    mapping = {**strays, **keyed}  # keys that are no index's text: never read
    converted = told.from_version_3(mapping, len(column))
    assert converted == _saved(column)
    results = told.results_of(told.column_of(converted), range(len(column)), len(column))
    assert list(results) == _one_by_one(column)


@given(columns, st.data())
def test_a_column_set_entry_by_entry_holds_every_result_told(column: list[Any], data: Any) -> None:
    order = data.draw(st.permutations([n for n, r in enumerate(column) if r is not UNTOLD]))
    saved = Column()
    for start in range(0, len(order), 2):  # two results a call
        previous, copy = saved, Column.of(saved.entries())
        saved = told.told_with(previous, {n: column[n] for n in order[start : start + 2]})
        assert previous == copy  # not changed: the cursor before the call keeps it
        change = cursor_delta.diff({"told": previous}, {"told": saved})
        assert change == scanned({"told": previous}, {"told": saved})
        replayed = cursor_delta.apply({"told": Column.of(previous.entries())}, change)
        assert replayed == {"told": saved}
    assert saved == Column.of(_saved(column))
