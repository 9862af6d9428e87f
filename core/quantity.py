"""Kubernetes quantities (``1Gi``, ``500m``, ``2``, ``1e3``): parsed, compared, kept as written.

Katib decodes katib-config into typed ``resource.Quantity`` values, so a config whose CPU limit
reads ``invalid`` fails to load (docs/katib-contract.md#composer-tests, TestDesiredDeployment 4);
the defaulting rules also need a quantity's sign ("zero means unset, negative deletes the entry",
docs/katib-contract.md#katib-config). We only need to *validate* and *compare* quantities, never to
do arithmetic on them or to re-format them, so a ``Quantity`` keeps the exact string the user wrote
(that string is what goes into the manifests we produce) next to its exact value as a ``Fraction``.

The grammar is the one of ``k8s.io/apimachinery/pkg/api/resource``::

    quantity        ::= signedNumber suffix
    signedNumber    ::= [ "+" | "-" ] number
    number          ::= digits | digits "." [ digits ] | "." digits
    suffix          ::= binarySI | decimalSI | decimalExponent
    binarySI        ::= Ki | Mi | Gi | Ti | Pi | Ei
    decimalSI       ::= m | "" | k | M | G | T | P | E
    decimalExponent ::= ( "e" | "E" ) [ "+" | "-" ] digits

``QuantityValue`` (``core/config_specs.py``, kept there so that reading a quantity imports no
pydantic) is the annotation pydantic models use, so that a bad quantity becomes a one-line
validation error at its field path. YAML turns an unquoted ``2`` or ``0.5`` into a number; those
are accepted as their decimal text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
DECIMAL_SUFFIXES = {"m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:(?P<exponent>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?)"
)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; the message quotes it."""


@dataclass(frozen=True, slots=True, order=True)
class Quantity:
    """A parsed quantity: ordered and compared by ``value``; ``text`` is what the user wrote."""

    value: Fraction
    text: str = field(compare=False)

    def __str__(self) -> str:
        return self.text

    @property
    def sign(self) -> int:
        """-1, 0 or 1, like ``resource.Quantity.Sign()``."""
        return (self.value > 0) - (self.value < 0)

    @property
    def is_zero(self) -> bool:
        return self.value == 0


def parse_quantity(raw: object) -> Quantity:
    """Parse ``raw``; raise ``QuantityError`` (``invalid quantity "<raw>"``) if it is not one."""
    if isinstance(raw, Quantity):
        return raw
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise QuantityError(f"invalid quantity {raw!r}: expected a string or a number")
    text = raw if isinstance(raw, str) else _number_text(raw)
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise QuantityError(f'invalid quantity "{text}"')
    return Quantity(_value(match), text)


def _number_text(number: int | float) -> str:
    """A YAML number as plain decimal text (``0.5``, ``2``; ``1e21`` spelled out in digits)."""
    return format(Decimal(str(number)), "f")


def _value(match: re.Match[str]) -> Fraction:
    mantissa = Fraction(match["number"])
    if match["exponent"] is not None:
        return mantissa * Fraction(10) ** int(match["exponent"][1:])
    suffix = match["suffix"] or ""
    if suffix in BINARY_SUFFIXES:
        return mantissa * (1 << BINARY_SUFFIXES[suffix])
    return mantissa * Fraction(10) ** DECIMAL_SUFFIXES[suffix]
