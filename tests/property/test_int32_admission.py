"""Counts above int32 are never admitted (Katib's types are ``*int32``), whatever else holds."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.int32 import INT32_MAX
from katib_resume.core.model import Experiment
from katib_resume.core.validation import validate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "from-volume-resume.yaml"
BASE = yaml.safe_load(EXAMPLE.read_text())
FIELDS = ("maxTrialCount", "parallelTrialCount", "maxFailedTrialCount")
COUNT = st.one_of(st.none(), st.integers(1, 2**40), st.just(INT32_MAX), st.just(INT32_MAX + 1))


@given(st.tuples(COUNT, COUNT, COUNT))
def test_a_count_above_int32_is_denied_naming_it(counts: tuple[int | None, ...]) -> None:
    manifest = {**BASE, "spec": {**BASE["spec"], **dict(zip(FIELDS, counts, strict=True))}}
    decision = validate(Experiment.model_validate(manifest))
    too_big = [f for f, c in zip(FIELDS, counts, strict=True) if c is not None and c > INT32_MAX]
    if too_big:
        assert not decision.allowed
        for field in too_big:
            assert f"spec.{field}: Invalid value: " in decision.message
            assert f"must be less than or equal to {INT32_MAX}" in decision.message
