"""``reader``, the quick reading of a restart, reads every text as ``parse`` does."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion.optuna_space import parse, reader
from katib_resume.adapters.local.suggestion.space import Parameter

bounds = st.tuples(st.decimals(-10, 10, places=3), st.decimals(-10, 10, places=3)).map(sorted)
texts = st.one_of(
    st.floats(-12, 12).map(repr),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.decimals(-11, 11, places=25).map(str),
    st.sampled_from(["1e-400", "0.10000000000000000001", "1_0", " 2.5", "nan", "-0.0", "x"]),
    st.text(max_size=6),
)


@given(limits=bounds, scale=st.sampled_from(["", "logUniform"]), texts=st.lists(texts))
def test_the_quick_reader_agrees_with_parse(
    limits: list[Decimal], scale: str, texts: list[str]
) -> None:
    low, high = limits
    parameter = Parameter("x", "double", low=low, high=high)
    read = reader(parameter, scale)
    for text in [*texts, str(low), str(high), repr(float(low)), repr(float(high))]:
        assert read(text) == parse(parameter, scale, text), text
