"""Goptuna's readers of ``cmaes``'s settings are Go's ``strconv.Atoi`` and ``ParseFloat``.

Katib's Goptuna service reads ``random_state`` with ``Atoi`` and ``sigma`` with ``ParseFloat``,
and a text they refuse fails the test build of its study
(``Failed to create goptuna study and search space: strconv.Atoi: parsing "x": invalid
syntax``). Python's ``int`` and ``float`` read more (spaces, ``_``, other scripts' digits, and a
float beyond ``float64`` as an infinity), so each reader is held to Go's grammar here.
"""

from __future__ import annotations

import math
import re

from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion.settings import (
    GOPTUNA_FAILURE,
    INT64,
    SettingsError,
    _go_float,
    _go_int,
    read,
)
from katib_resume.core.field_errors import go_quote

NUMBERISH = st.text(alphabet="0123456789+-._eExXpP ٣\t", max_size=12)


@given(st.integers(-INT64, INT64 - 1))
def test_atoi_reads_every_int64_as_go_writes_it(value: int) -> None:
    assert _go_int(str(value)) == value
    if value >= 0:
        assert _go_int(f"+{value}") == value


@given(st.integers(INT64, 2**80) | st.integers(-(2**80), -INT64 - 1))
def test_atoi_is_out_of_range_beyond_int64(value: int) -> None:
    text = str(value)
    assert_refused(_go_int, text, f'strconv.Atoi: parsing "{text}": value out of range')


@given(NUMBERISH)
@example(" 1")
@example("1_0")
@example("٣")
@example("")
def test_atoi_reads_only_a_sign_and_ascii_digits(text: str) -> None:
    if re.fullmatch(r"[+-]?[0-9]+", text):
        assert _go_int(text) == int(text)
    else:
        assert_refused(_go_int, text, f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax")


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_parse_float_reads_every_finite_float_written_both_ways(value: float) -> None:
    assert _go_float(repr(value)) == value
    assert _go_float(value.hex()) == value
    assert _go_float(f"{value:f}") == float(f"{value:f}")


@given(NUMBERISH)
@example("1e400")
@example(" 1")
@example("1_0")
def test_parse_float_refuses_what_go_refuses(text: str) -> None:
    try:
        value = _go_float(text)
    except ValueError as error:
        assert str(error) in (
            f"strconv.ParseFloat: parsing {go_quote(text)}: invalid syntax",
            f"strconv.ParseFloat: parsing {go_quote(text)}: value out of range",
        )
        assert " " not in text or "invalid syntax" in str(error)
        return
    assert not re.search(r"[ \t_٣]", text)  # what Python's float reads and Go's does not
    assert math.isfinite(value)
    assert value == (float.fromhex(text) if "x" in text.lower() else float(text))


def test_parse_float_reads_go_s_words_for_the_infinities_and_nan() -> None:
    assert _go_float("+Inf") == _go_float("infinity") == math.inf
    assert _go_float("-INFINITY") == -math.inf
    assert math.isnan(_go_float("NaN"))
    for text in ("+nan", "infin", "0x1", "1e400"):
        try:
            _go_float(text)
        except ValueError:
            continue
        raise AssertionError(f"{text!r} was read")


@given(NUMBERISH)
def test_a_cmaes_seed_go_refuses_fails_validation_with_goptuna_s_words(text: str) -> None:
    try:
        expected: str | None = None
        _go_int(text)
    except ValueError as error:
        expected = GOPTUNA_FAILURE + str(error)
    try:
        read("cmaes", {"random_state": text})
    except SettingsError as error:
        assert str(error) == expected
    else:
        assert expected is None


def test_an_infinite_sigma_fails_validation() -> None:
    """Goptuna uses it, and its CMA-ES's numbers turn NaN at the first generation's update;
    ours failed there too (``cannot convert float NaN to integer``), at every call."""
    assert_refused(
        lambda t: read("cmaes", {"sigma": t}),
        "+Inf",
        "sigma must be a finite number, got +Inf",
        SettingsError,
    )
    assert read("cmaes", {"sigma": "-inf"})["sigma"] == -math.inf  # not > 0: not used


def assert_refused(
    reader: object, text: str, message: str, kind: type[Exception] = ValueError
) -> None:
    assert callable(reader)
    try:
        reader(text)
    except kind as error:
        assert str(error) == message
    else:
        raise AssertionError(f"{text!r} was read")
