"""Kubernetes quantities: accepted and rejected forms, exact values, ordering, text kept."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.quantity import (
    BINARY_SUFFIXES,
    DECIMAL_SUFFIXES,
    QuantityError,
    parse_quantity,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1Gi", Fraction(2**30)),
        ("500m", Fraction(1, 2)),
        ("5Gi", Fraction(5 * 2**30)),
        ("10Mi", Fraction(10 * 2**20)),
        ("2", Fraction(2)),
        ("1e3", Fraction(1000)),
        ("1E3", Fraction(1000)),
        ("2e-3", Fraction(2, 1000)),
        ("1E", Fraction(10**18)),
        ("0.5Gi", Fraction(2**29)),
        (".5", Fraction(1, 2)),
        ("1.", Fraction(1)),
        ("+3k", Fraction(3000)),
        ("-1", Fraction(-1)),
        ("0", Fraction(0)),
    ],
)
def test_valid_quantities_have_their_exact_value_and_keep_their_text(
    text: str, value: Fraction
) -> None:
    quantity = parse_quantity(text)
    assert quantity.value == value
    assert str(quantity) == text


@pytest.mark.parametrize(
    "text", ["invalid", "", "1gi", "1 Gi", "Gi", "1e", "e3", "1.2.3", "1Gi ", "--1", "1KiB", "0x10"]
)
def test_invalid_quantities_are_rejected_with_the_text_quoted(text: str) -> None:
    with pytest.raises(QuantityError, match=f'invalid quantity "{text}"'):
        parse_quantity(text)


@pytest.mark.parametrize("raw", [True, None, ["1Gi"], {"a": 1}])
def test_non_scalars_are_not_quantities(raw: object) -> None:
    with pytest.raises(QuantityError) as raised:
        parse_quantity(raw)
    assert str(raised.value) == f"invalid quantity {raw!r}: expected a string or a number"


def test_yaml_numbers_are_read_as_their_decimal_text() -> None:
    assert parse_quantity(2).text == "2"
    assert parse_quantity(0.5).value == Fraction(1, 2)
    assert parse_quantity(1e21).value == 10**21


def test_equal_sizes_in_different_notations_compare_equal_and_hash_alike() -> None:
    assert parse_quantity("1000m") == parse_quantity("1")
    assert hash(parse_quantity("1Ki")) == hash(parse_quantity("1024"))
    assert parse_quantity("1Ki").text == "1Ki"


def test_quantities_sort_by_size() -> None:
    texts = ["1Gi", "500Mi", "2G", "100m", "1e9"]
    assert [str(q) for q in sorted(map(parse_quantity, texts))] == [
        "100m",
        "500Mi",
        "1e9",
        "1Gi",
        "2G",
    ]


def test_sign_and_zero() -> None:
    assert parse_quantity("-5Gi").sign == -1
    assert parse_quantity("0Mi").sign == 0
    assert parse_quantity("0Mi").is_zero
    assert parse_quantity("1m").sign == 1


SUFFIX_SCALE = {s: Fraction(2) ** e for s, e in BINARY_SUFFIXES.items()} | {
    s: Fraction(10) ** e for s, e in DECIMAL_SUFFIXES.items()
}


@given(
    sign=st.sampled_from(["", "+", "-"]),
    whole=st.integers(min_value=0, max_value=10**12),
    fraction=st.one_of(st.none(), st.text("0123456789", min_size=1, max_size=6)),
    suffix=st.sampled_from(sorted(SUFFIX_SCALE)),
)
def test_format_then_parse_round_trips(
    sign: str, whole: int, fraction: str | None, suffix: str
) -> None:
    number = f"{whole}" + (f".{fraction}" if fraction is not None else "")
    text = f"{sign}{number}{suffix}"
    quantity = parse_quantity(text)
    expected = Fraction(number) * SUFFIX_SCALE[suffix] * (-1 if sign == "-" else 1)
    assert quantity.value == expected
    assert str(quantity) == text
    assert parse_quantity(str(quantity)) == quantity


@given(
    st.lists(
        st.tuples(st.integers(-(10**6), 10**6), st.sampled_from(sorted(SUFFIX_SCALE))),
        min_size=1,
        max_size=8,
    )
)
def test_order_agrees_with_the_values(parts: list[tuple[int, str]]) -> None:
    quantities = [parse_quantity(f"{number}{suffix}") for number, suffix in parts]
    expected = sorted(number * SUFFIX_SCALE[suffix] for number, suffix in parts)
    assert [q.value for q in sorted(quantities)] == expected


@pytest.mark.parametrize(
    ("suffix", "scale"),
    [
        ("Ki", 1024),
        ("Mi", 1024**2),
        ("Gi", 1024**3),
        ("Ti", 1024**4),
        ("Pi", 1024**5),
        ("Ei", 1024**6),
        ("m", Fraction(1, 1000)),
        ("", 1),
        ("k", 1000),
        ("M", 1000**2),
        ("G", 1000**3),
        ("T", 1000**4),
        ("P", 1000**5),
        ("E", 1000**6),
    ],
)
def test_every_suffix_has_kubernetes_scale(suffix: str, scale: Fraction | int) -> None:
    assert parse_quantity(f"3{suffix}").value == 3 * scale


def test_a_parsed_quantity_is_accepted_as_it_is() -> None:
    """A model built from parsed quantities validates them again: they pass as they are."""
    quantity = parse_quantity("1.5Gi")
    assert parse_quantity(quantity) is quantity
