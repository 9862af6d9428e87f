"""Every combination of policy traits, played through the planner: the policy table refuses
exactly the rows the lifecycles cannot carry.

For each of the eight rows, ``LongRunning``'s traits are replaced by the row (the planner reads
traits only, never a policy's name), and the whole restart lifecycle is played: first run to
``maxTrialCount``, budget raised, Deployment made available again. A row is honoured when an
Experiment that restarts gets its suggestion service back (the Suggestion Running again); one
that does not restart may release its service. ``policy.problem`` must refuse a row exactly when
it is not honoured, and the shipped table (checked at import) holds only honoured rows.
"""

from __future__ import annotations

import itertools
from types import MappingProxyType

import pytest

from katib_resume.core import policy
from katib_resume.core.policy import PolicyTraits, ResumePolicy
from tests.integration.test_resume_sequences import experiment, first_run
from tests.support.harness import Bench

ROWS = [PolicyTraits(*bits) for bits in itertools.product((False, True), repeat=3)]


def _honoured(bench: Bench) -> tuple[bool, bool]:
    """(the Experiment restarted, its Suggestion serves again) after a raised budget."""
    first_run(bench)
    bench.edit(maxTrialCount=20)
    bench.settle()
    if bench.deployment() is not None:  # the service came back: its pod becomes ready
        bench.set_available()
        bench.settle()
    restarted = bench.conditions("Experiment")[-1] == "Ru+"
    serving = bench.conditions("Suggestion")[-1:] == ["R+"]
    return restarted, serving


@pytest.mark.parametrize("row", ROWS, ids=repr)
def test_a_row_is_refused_exactly_when_a_restart_would_strand_the_suggestion(
    row: PolicyTraits, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = dict(policy.TRAITS) | {ResumePolicy.LONG_RUNNING: row}
    monkeypatch.setattr(policy, "TRAITS", MappingProxyType(table))
    restarted, serving = _honoured(Bench(experiment("LongRunning")))
    assert restarted is row.restartable
    honoured = serving or not restarted
    assert (policy.problem(row) is None) is honoured


def test_an_impossible_row_fails_when_the_table_is_built() -> None:
    rows = dict(policy.TRAITS) | {
        ResumePolicy.LONG_RUNNING: PolicyTraits(
            restartable=True, keeps_service=False, has_volume=False
        )
    }
    with pytest.raises(ValueError, match="LongRunning: a restartable policy must keep"):
        policy.checked(rows)


def test_every_shipped_row_is_honoured() -> None:
    assert all(policy.problem(row) is None for row in policy.TRAITS.values())
    assert set(policy.TRAITS) == set(ResumePolicy)
