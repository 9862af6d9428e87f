"""A rebuild's results by trial number and its best trial, read in few passes (``told_column.py``),
equal those read result by result: told results of every kind a cursor keeps (numbers of
either sign, ``None`` for a failure, the infinities' texts, equal values told twice), running
trials anywhere, and a ``told`` holding keys that are no trial's (then the best is found among
the trials' results alone); and so does the count of complete trials."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import told_column as told
from katib_resume.adapters.local.suggestion.live_study import UNTOLD, best_of, count_complete
from katib_resume.adapters.local.suggestion.nonfinite import value_of

kept_values = st.one_of(
    st.none(),
    st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, 7]),
    st.floats(-10, 10),
    st.sampled_from(["inf", "-inf"]),
)
columns = st.lists(st.one_of(st.just(UNTOLD), kept_values), max_size=12)


def _one_by_one(column: list[Any]) -> list[Any]:
    return [r if r is UNTOLD else value_of(r) for r in column]


@given(columns, st.dictionaries(st.sampled_from(["x", "99", "-1"]), kept_values, max_size=2))
@example([1.0, UNTOLD, 1.0, None], {})  # equal values: the first trial that has it
@example(["inf", 3.0, "-inf"], {"x": -100.0})  # a key no trial has: not among the trials'
@example([UNTOLD, UNTOLD], {})  # nothing told: no best
def test_results_and_the_best_trial_equal_those_read_one_by_one(
    column: list[Any], strays: dict[str, Any]
) -> None:
    kept = {str(n): r for n, r in enumerate(column) if r is not UNTOLD}
    mapping = {**kept, **strays}
    keys = [str(n) for n in range(len(column))]
    results = told.results_of(mapping, keys, told.types_of(mapping))
    assert results == _one_by_one(column)
    untold = column.count(UNTOLD)
    assert told.complete_of(results, untold, told.types_of(mapping)) == count_complete(results)
    for maximize in (False, True):
        expected = best_of(_one_by_one(column), maximize)
        assert told.best(mapping, results, untold, told.types_of(mapping), maximize) == expected
