"""The types of the command line's flags: each checks its value as it is parsed.

A bad value is an ``argparse.ArgumentTypeError``, which the parser turns into one line and exit
status 2. Plain ``argparse`` only, so that ``katib-resume --help`` imports nothing more.
"""

from __future__ import annotations

import argparse

MAX_PORT = 65535


def _whole(text: str, least: int, rule: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{rule}, got {value}")
    return value


def positive(text: str) -> int:
    """A count flag: a whole number of at least 1 (Katib's counts are positive)."""
    return _whole(text, 1, "must be at least 1")


def seconds(text: str) -> float:
    """A duration flag: a number of seconds greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def seed(text: str) -> int:
    return _whole(text, 0, "must not be negative")


def port(text: str) -> int:
    """``--port``: 1-65535, or 0 for any free one (the server logs the port it chose)."""
    value = _whole(text, 0, "must not be negative")
    if value > MAX_PORT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_PORT}, got {value}")
    return value


def config_map(text: str) -> tuple[str, str]:
    """``--config-map NAMESPACE/NAME``."""
    namespace, slash, name = text.partition("/")
    if not (slash and namespace and name) or "/" in name:
        raise argparse.ArgumentTypeError(f"expected NAMESPACE/NAME, got {text!r}")
    return namespace, name


OUTPUTS = ("wide", "yaml", "json", "name")


def output(text: str) -> str:
    """``get -o``: ``wide``, ``yaml``, ``json``, ``name`` or ``jsonpath=TEMPLATE`` (the template
    is compiled by ``get``, which reports a bad one as kubectl does)."""
    if text in OUTPUTS or text.startswith("jsonpath="):
        return text
    choices = ", ".join(f"'{choice}'" for choice in (*OUTPUTS, "jsonpath=TEMPLATE"))
    raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {choices})")
