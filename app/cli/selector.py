"""Label selectors as ``kubectl get -l`` reads them: equality- and set-based requirements.

The grammar is the API server's (``k8s.io/apimachinery/pkg/labels``): requirements joined by
commas, each one of ``key``, ``!key``, ``key=value`` (or ``==``), ``key!=value``,
``key in (a,b)`` and ``key notin (a,b)``, with blanks allowed between the tokens. Keys and
values are checked as labels are (a key is an optional DNS-subdomain prefix and ``/`` and a name
of at most 63 characters; a value at most 63 characters, possibly empty), so a selector that
could never match a valid label is refused instead of silently matching nothing.

No maintained Python package parses this grammar (the Kubernetes client passes the string to the
server), so it is written here, small, and checked by property tests: ``parse(format(s)) == s``,
and ``matches`` agrees with a naive oracle.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Operator = Literal["=", "!=", "in", "notin", "exists", "!"]
NAME_MAX, PREFIX_MAX = 63, 253
_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_TOKEN = re.compile(r"\s*(?:(==|!=|=|!|\(|\)|,)|([^\s!=(),]+))")
SET_OPERATORS: tuple[Operator, ...] = ("in", "notin")


class SelectorError(ValueError):
    """The selector does not parse; the message says where and why."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """One requirement: ``values`` holds one value for ``=``/``!=``, a sorted set for
    ``in``/``notin``, and nothing for ``exists`` (``key``) and ``!`` (``!key``)."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present, value = self.key in labels, labels.get(self.key)
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator in ("=", "in"):
            return present and value in self.values
        return not present or value not in self.values  # != and notin match a missing key

    def __str__(self) -> str:
        if self.operator == "exists":
            return self.key
        if self.operator == "!":
            return f"!{self.key}"
        if self.operator in SET_OPERATORS:
            return f"{self.key} {self.operator} ({','.join(self.values)})"
        return f"{self.key}{self.operator}{self.values[0]}"


Selector = tuple[Requirement, ...]


def matches(selector: Selector, labels: Mapping[str, str] | None) -> bool:
    """Every requirement holds (the empty selector matches everything)."""
    return all(requirement.matches(labels or {}) for requirement in selector)


def format_selector(selector: Selector) -> str:
    return ",".join(map(str, selector))


def parse(text: str) -> Selector:
    """The requirements of ``text``, or ``SelectorError`` naming the first problem."""
    tokens = _tokens(text)
    if not tokens:
        return ()
    requirements, position = [], 0
    while True:
        requirement, position = _requirement(tokens, position)
        requirements.append(requirement)
        if position == len(tokens):
            return tuple(requirements)
        if tokens[position] != ",":
            raise SelectorError(f"expected ',' between requirements, found {tokens[position]!r}")
        position += 1


def _tokens(text: str) -> list[str]:
    tokens, position = [], 0
    while text[position:].strip():
        found = _TOKEN.match(text, position)
        if found is None:  # pragma: no cover - every non-blank character starts a token
            raise SelectorError(f"cannot read {text[position:]!r}")
        tokens.append(found.group(1) or found.group(2))
        position = found.end()
    return tokens


def _requirement(tokens: list[str], at: int) -> tuple[Requirement, int]:
    if at >= len(tokens):
        raise SelectorError("expected a requirement after ','")
    if tokens[at] == "!":
        key = _key(tokens, at + 1)
        return Requirement(key, "!"), at + 2
    key = _key(tokens, at)
    operator = tokens[at + 1] if at + 1 < len(tokens) else ","
    if operator == ",":
        return Requirement(key, "exists"), at + 1
    if operator in ("=", "==", "!="):
        value, end = _value_after(tokens, at + 2)
        return Requirement(key, "!=" if operator == "!=" else "=", (value,)), end
    if operator in SET_OPERATORS:
        values, end = _set(tokens, at + 2, operator)
        return Requirement(key, "in" if operator == "in" else "notin", values), end
    raise SelectorError(
        f"expected an operator (=, ==, !=, in, notin) after {key!r}, found {operator!r}"
    )


def _key(tokens: list[str], at: int) -> str:
    if at >= len(tokens) or not _is_word(tokens[at]):
        found = repr(tokens[at]) if at < len(tokens) else "the end"
        raise SelectorError(f"expected a label key, found {found}")
    key = tokens[at]
    prefix, slash, name = key.rpartition("/")
    if slash and not (prefix and len(prefix) <= PREFIX_MAX and _PREFIX.fullmatch(prefix)):
        raise SelectorError(f"invalid label key {key!r}: the prefix must be a DNS subdomain")
    if not _is_name(name):
        raise SelectorError(f"invalid label key {key!r}: {_NAME_RULE}")
    return key


def _value_after(tokens: list[str], at: int) -> tuple[str, int]:
    """An equality's value; it may be empty (``key=``), as a label's may."""
    if at >= len(tokens) or tokens[at] == ",":
        return "", at
    return _value(tokens[at]), at + 1


def _value(token: str) -> str:
    if not (_is_word(token) and _is_name(token)):
        raise SelectorError(f"invalid label value {token!r}: {_NAME_RULE}")
    return token


def _set(tokens: list[str], at: int, operator: str) -> tuple[tuple[str, ...], int]:
    """``( value, value, ... )``: the values, sorted and without repeats."""
    if at >= len(tokens) or tokens[at] != "(":
        raise SelectorError(f"expected '(' after {operator!r}")
    values: set[str] = set()
    at += 1
    while True:
        value = ""
        if at < len(tokens) and tokens[at] not in (",", ")"):
            value, at = _value(tokens[at]), at + 1
        values.add(value)
        if at >= len(tokens):
            raise SelectorError(f"expected ')' to close the values of {operator!r}")
        if tokens[at] == ")":
            break
        if tokens[at] != ",":
            raise SelectorError(f"expected ',' or ')' in the values of {operator!r}")
        at += 1
    if values == {""}:
        raise SelectorError(f"{operator!r} needs at least one value")
    return tuple(sorted(values)), at + 1


def _is_word(token: str) -> bool:
    return token not in ("==", "!=", "=", "!", "(", ")", ",")


def _is_name(text: str) -> bool:
    return len(text) <= NAME_MAX and _NAME.fullmatch(text) is not None


_NAME_RULE = (
    f"at most {NAME_MAX} characters: letters, digits, '-', '_' and '.', "
    "starting and ending with a letter or digit"
)
