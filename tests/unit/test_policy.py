"""The resume-policy table (``core.policy``) says what docs/katib-contract.md#resume-policies says,
row by row, and refuses an incomplete or impossible table with a message naming the row."""

from __future__ import annotations

from pathlib import Path

import pytest

from katib_resume.core.policy import (
    DEFAULT_POLICY,
    TRAITS,
    PolicyTraits,
    ResumePolicy,
    checked,
    problem,
    traits,
)

CONTRACT = (Path(__file__).resolve().parents[2] / "docs" / "katib-contract.md").read_text()


def _contract_row(policy: str) -> PolicyTraits:
    """A policy's row of the contract's table: after completion, restartable."""
    start = CONTRACT.index("## Resume policies")
    section = CONTRACT[start : CONTRACT.index("\n## ", start)]
    (line,) = [line for line in section.splitlines() if line.startswith(f"| `{policy}`")]
    after, _, restartable = (cell.strip() for cell in line.split("|")[2:5])
    return PolicyTraits(
        restartable=restartable.startswith("yes"),
        keeps_service="keep running" in after,
        has_volume="PVC (and PV) kept" in after,
    )


@pytest.mark.parametrize("policy", list(ResumePolicy), ids=str)
def test_each_policys_traits_are_the_contracts(policy: ResumePolicy) -> None:
    assert traits(policy) == _contract_row(policy.value)


def test_the_policy_names_and_the_default_are_katibs() -> None:
    assert [p.value for p in ResumePolicy] == ["Never", "LongRunning", "FromVolume"]
    assert DEFAULT_POLICY is ResumePolicy.NEVER
    assert ResumePolicy.parse("") is ResumePolicy.parse(None) is ResumePolicy.NEVER
    assert ResumePolicy.parse("FromVolume") is ResumePolicy.FROM_VOLUME
    with pytest.raises(ValueError, match="'Sometimes' is not a valid ResumePolicy"):
        ResumePolicy.parse("Sometimes")


STRANDED = PolicyTraits(restartable=True, keeps_service=False, has_volume=False)


def test_a_restart_needs_the_service_or_a_volume() -> None:
    assert problem(STRANDED) == (
        "a restartable policy must keep the service or a volume to restart it from"
    )
    for keeps_service, has_volume in ((True, False), (False, True), (True, True)):
        assert problem(PolicyTraits(True, keeps_service, has_volume)) is None
    assert problem(PolicyTraits(False, False, False)) is None


def test_an_impossible_or_incomplete_table_is_refused_by_name() -> None:
    with pytest.raises(ValueError) as impossible:
        checked(dict(TRAITS) | {ResumePolicy.LONG_RUNNING: STRANDED})
    assert str(impossible.value) == (
        "resume policy LongRunning: a restartable policy must keep the service or a volume "
        "to restart it from"
    )
    with pytest.raises(ValueError) as incomplete:
        checked({ResumePolicy.NEVER: TRAITS[ResumePolicy.NEVER]})
    missing = sorted({ResumePolicy.LONG_RUNNING, ResumePolicy.FROM_VOLUME})
    assert str(incomplete.value) == f"resume policies without traits: {missing}"
    table = checked(dict(TRAITS))
    assert dict(table) == dict(TRAITS)
    with pytest.raises(TypeError):
        table[ResumePolicy.NEVER] = STRANDED  # type: ignore[index]
