"""The controller's retry backoff: doubling from ``base`` up to ``cap``, for any number of
failures in a row (a reconcile failing a thousand times once overflowed a float)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.app.loop.controller import Backoff


@given(st.integers(0, 10**9), st.integers(0, 10**9))
def test_the_delay_doubles_up_to_its_cap_for_any_run_of_failures(one: int, two: int) -> None:
    backoff = Backoff(base=0.5, cap=60.0)
    low, high = sorted((one, two))
    assert 0.5 <= backoff.delay(low) <= backoff.delay(high) <= 60.0
    assert backoff.delay(1) == 0.5 and backoff.delay(3) == 2.0 and backoff.delay(2000) == 60.0
