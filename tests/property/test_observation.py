"""Katib's observation fold (docs/katib-contract.md#observations) against a direct reading of its
rules."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.observation import Metric, MetricRow, observe, parse_timestamp

times = st.sampled_from(
    [
        "0001-01-01T00:00:00Z",
        "2020-08-10T06:47:38Z",
        "2020-08-10T14:47:38+08:00",  # the same instant as the one above
        "2020-08-10T06:47:38.5Z",
        "2020-08-11T00:00:00-01:00",
    ]
)
values = st.sampled_from(["0.5", "-1", "2e3", "0.25", "unavailable", "", "nan"])
rows = st.lists(st.builds(MetricRow, times, st.sampled_from(["loss", "other"]), values))


def _oracle(found: list[MetricRow]) -> Metric:
    mine = [row for row in found if row.name == "loss"]
    numbers = [row.value for row in mine if row.value not in ("unavailable", "", "nan")]
    latest = "unavailable"
    if mine:
        newest = max(parse_timestamp(row.time_stamp) for row in mine)
        latest = [row for row in mine if parse_timestamp(row.time_stamp) == newest][-1].value
    if not numbers:
        return Metric("loss", latest=latest)
    low = min(numbers, key=float)
    high = max(numbers, key=float)
    first_low = next(v for v in numbers if float(v) == float(low))
    first_high = next(v for v in numbers if float(v) == float(high))
    return Metric("loss", first_low, first_high, latest)


@given(rows)
def test_min_max_and_latest_follow_katibs_rules(found: list[MetricRow]) -> None:
    assert observe(["loss"], found) == (_oracle(found),)
