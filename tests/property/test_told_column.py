"""A rebuild's results by trial number and its best trial, read in few passes (``told_column.py``),
equal those read result by result: told results of every kind a cursor keeps (numbers of
either sign, ``None`` for a failure, the infinities' texts, equal values told twice), running
trials anywhere (inside the column, and after its end), assignments that are no trial, and
entries past the assignments; and so do the running trials (``untold_of``, which skips its pass
where none can be) and the count of complete trials. A format 3 ``told``
(a dict by index text) becomes the column that reads as format 3 read it, and a column set
entry by entry (``told_with``) is the column of all the results told; the journal's record of
each step, found from the places ``told_with`` notes, is the one a pass over the whole column
finds, and turns the column before into the one after."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import cursor_delta
from katib_resume.adapters.local.suggestion import told_column as told
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
    saved = [told.UNTOLD_TEXT if r is UNTOLD else r for r in column]
    while saved and saved[-1] == told.UNTOLD_TEXT:
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
        saved = _saved(column) + [told.UNTOLD_TEXT] * (len(column) - len(saved)) + strays
    kept: Any = range(len(whole))
    if data is not None:
        kept = (
            data.draw(
                st.one_of(st.just(kept), st.lists(st.sampled_from(kept), unique=True).map(sorted))
            )
            if whole
            else kept
        )
    types = told.types_of(saved)
    results = told.results_of(saved, kept, len(whole), types)
    expected = [_one_by_one(whole)[i] for i in kept]
    assert results == expected
    untold = expected.count(UNTOLD)
    running = told.untold_of(saved, kept, len(whole), types, results)
    assert running == {index for index, r in zip(kept, expected, strict=True) if r is UNTOLD}
    assert told.complete_of(results, untold, types) == count_complete(results)
    for maximize in (False, True):
        assert told.best(results, untold, types, maximize) == best_of(expected, maximize)


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
    assert told.results_of(
        converted, range(len(column)), len(column), told.types_of(converted)
    ) == _one_by_one(column)
    assert converted == _saved(column)


@given(columns, st.data())
def test_a_column_set_entry_by_entry_holds_every_result_told(column: list[Any], data: Any) -> None:
    order = data.draw(st.permutations([n for n, r in enumerate(column) if r is not UNTOLD]))
    saved: list[Any] = []
    for start in range(0, len(order), 2):  # two results a call
        previous, copy = saved, list(saved)
        saved = told.told_with(previous, {n: column[n] for n in order[start : start + 2]})
        assert previous == copy  # not changed: the cursor before the call keeps it
        change = cursor_delta.diff({"told": previous}, {"told": saved})
        assert change == scanned({"told": previous}, {"told": saved})
        assert cursor_delta.apply({"told": list(previous)}, change) == {"told": saved}
    assert saved == _saved(column)
