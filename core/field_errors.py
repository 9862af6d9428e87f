"""Kubernetes' ``field.Error`` texts, as Katib's validator produces them.

Clients and scripts match admission's messages, so each error is rendered as
``k8s.io/apimachinery``'s ``field.Error`` renders it: ``<path>: Invalid value: <value>: <detail>``,
``<path>: Required value: <detail>`` or ``<path>: Forbidden: <detail>``. The bad value is shown as
Go shows it: a string in ``%q`` form (``go_quote``), a number bare, any other value as Go's
``%#v`` of its type (``go_strings`` for a ``[]string``); a detail that quotes a Go value with
``%v`` uses ``go_v``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Kind = Literal["Invalid", "Required", "Forbidden"]


@dataclass(frozen=True, slots=True)
class FieldError:
    """One error, as Kubernetes' ``field.Error``; ``text`` is its full message."""

    kind: Kind
    field: str
    text: str


def invalid(field: str, value: int | str, detail: str) -> FieldError:
    shown = str(value) if isinstance(value, int) else go_quote(value)
    return invalid_shown(field, shown, detail)


def invalid_shown(field: str, shown: str, detail: str) -> FieldError:
    """An ``Invalid`` error whose value is already in Go's form (a list, a struct)."""
    return FieldError("Invalid", field, f"{field}: Invalid value: {shown}: {detail}")


def required(field: str, detail: str) -> FieldError:
    return FieldError("Required", field, f"{field}: Required value: {detail}")


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError("Forbidden", field, f"{field}: Forbidden: {detail}")


_ESCAPES = {'"': '\\"', "\\": "\\\\"} | {
    control: "\\" + letter for control, letter in zip("\a\b\f\n\r\t\v", "abfnrtv", strict=True)
}


def go_quote(value: str) -> str:
    """Go's ``%q`` (``strconv.Quote``), with which ``field.Invalid`` shows a string value."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


def go_strings(values: Sequence[object] | None) -> str:
    """Go's ``%#v`` of a ``[]string``: ``[]string{"a", "b"}``, ``[]string(nil)`` when absent."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"


def go_v(value: object) -> str:
    """Go's ``%v`` of a value decoded into Katib's structs: a struct as ``{f1 f2 ...}`` (its
    fields in declaration order, given here as a tuple), a slice as ``[a b]``, a string bare."""
    if isinstance(value, tuple):
        return "{" + " ".join(go_v(v) for v in value) + "}"
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    if value is None:
        return ""
    return str(value)
