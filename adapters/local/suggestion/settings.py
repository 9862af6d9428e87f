"""Katib's algorithm settings: names, defaults, rules, messages.

A setting is a string in the Experiment (``algorithmSettings: [{name, value}]``); each algorithm
reads the names the Katib service it replaces reads, with that service's defaults, and rejects a
bad value with that service's words, typos included ("greate", "great than"), because users and
the Katib UI's presets already speak them:

- ``random`` and ``tpe``: the hyperopt service (``random_state``; ``tpe`` also ``gamma``,
  ``prior_weight``, ``n_EI_candidates``);
- ``grid``: the Optuna service (``random_state``, the seed of the order its cells are drawn in);
- ``multivariate-tpe``: the Optuna service (``n_startup_trials``, ``n_ei_candidates``,
  ``random_state``);
- ``cmaes`` and ``sobol``: the Goptuna service, which ignores names it does not read and reports
  a value it cannot parse as ``Failed to create goptuna study and search space: <Go's error>``;
- ``bayesianoptimization``: the scikit-optimize service.

Two differences, Katib bugs fixed: the Optuna service refuses a negative ``random_state`` for
``grid`` with an empty message (ours is that service's own words for the rule elsewhere), and
Goptuna answers a bad ``cmaes`` value with gRPC INTERNAL, which Katib's controller takes for
valid (the Experiment then fails at every ``GetSuggestions``); here every bad value is a
validation failure, so the Experiment fails before any Trial.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from katib_resume.core.field_errors import go_quote


class SettingsError(ValueError):
    """The Experiment's algorithm or its settings cannot be run; the message says why."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One setting: its parser, its default, the check its value must pass and the message
    when it does not (``{v}`` is the value as written)."""

    parse: Callable[[str], Any]
    default: Any
    valid: Callable[[Any], bool] = lambda _: True
    message: str = ""
    then: tuple[tuple[Callable[[Any], bool], str], ...] = ()
    """Checks of ours after Katib's, each with its message: a value Katib's rule admits but
    its library cannot run with (the Experiment would fail at every ``GetSuggestions``)."""

    def failure(self, value: Any) -> str | None:
        """The message of the first check ``value`` fails (``{v}`` not yet filled), or None."""
        if not self.valid(value):
            return self.message
        return next((message for valid, message in self.then if not valid(value)), None)


def _at_least_zero(default: int | None, message: str) -> Rule:
    return Rule(int, default, lambda v: v >= 0, message)


def _one_of(default: str, allowed: tuple[str, ...], what: str) -> Rule:
    return Rule(
        str,
        default,
        lambda v: v in allowed,
        what + " {v} is not supported in Bayesian optimization",
    )


_HYPEROPT_SEED = _at_least_zero(None, "random_state should be great or equal than zero")
_OPTUNA_SEED = _at_least_zero(None, "random_state should be greate or equal than zero")
_EI_CANDIDATES = Rule(
    int,
    24,
    lambda v: v >= 0,
    "n_ei_candidates should be greate or equal than zero",
    ((lambda v: v > 0, "n_ei_candidates should be great than zero"),),
)
"""Katib's Optuna service admits 0, with which Optuna's TPE fails at its first model-based
ask; 0 is refused in the words Katib's hyperopt service uses for its ``n_EI_candidates``."""
RULES: dict[str, dict[str, Rule]] = {
    "random": {"random_state": _HYPEROPT_SEED},
    "grid": {"random_state": _OPTUNA_SEED},
    "tpe": {
        "random_state": _HYPEROPT_SEED,
        "gamma": Rule(float, 0.25, lambda v: 0 < v < 1, "gamma should be in the range of (0, 1)"),
        "prior_weight": Rule(float, 1.0, lambda v: v > 0, "prior_weight should be great than zero"),
        "n_EI_candidates": Rule(
            int, 24, lambda v: v > 0, "n_EI_candidates should be great than zero"
        ),
    },
    "multivariate-tpe": {
        "n_startup_trials": _at_least_zero(
            10, "n_startup_trials should be greate or equal than zero"
        ),
        "n_ei_candidates": _EI_CANDIDATES,
        "random_state": _OPTUNA_SEED,
    },
    "bayesianoptimization": {
        "base_estimator": _one_of("GP", ("GP", "RF", "ET", "GBRT"), "base_estimator"),
        "n_initial_points": _at_least_zero(
            10, "n_initial_points should be great or equal than zero"
        ),
        "acq_func": _one_of(
            "gp_hedge", ("gp_hedge", "LCB", "EI", "PI", "EIps", "PIps"), "acq_func"
        ),
        "acq_optimizer": _one_of("auto", ("auto", "sampling", "lbfgs"), "acq_optimizer"),
        "random_state": _HYPEROPT_SEED,
    },
}
"""The services that check every name: an unknown one is an error."""


_GO_INT = re.compile(r"[+-]?[0-9]+")
_GO_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_GO_HEX = re.compile(r"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+")
_GO_SPECIAL = {"nan": math.nan} | {
    sign + word: math.copysign(math.inf, float(sign + "1"))
    for sign in ("", "+", "-")
    for word in ("inf", "infinity")
}
INT64 = 2**63


def _go_error(function: str, text: str, why: str) -> ValueError:
    return ValueError(f"strconv.{function}: parsing {go_quote(text)}: {why}")


def _go_int(text: str) -> int:
    """Go's ``strconv.Atoi`` on a 64-bit machine, with its error texts (Goptuna's messages
    quote them): ASCII digits after an optional sign, nothing else (Python's ``int`` also
    takes spaces, ``_`` and other scripts' digits), within ``int64``."""
    if not _GO_INT.fullmatch(text):
        raise _go_error("Atoi", text, "invalid syntax")
    value = int(text)
    if not -INT64 <= value < INT64:
        raise _go_error("Atoi", text, "value out of range")
    return value


def _go_float(text: str) -> float:
    """Go's ``strconv.ParseFloat(text, 64)``: a decimal or hexadecimal literal (Go's ``_``
    between a hexadecimal literal's digits is not read), or ``inf``, ``infinity`` (signed) or
    ``nan`` in any case; a literal beyond ``float64`` is ``value out of range``, where Python's
    ``float`` reads it as an infinity (and also takes spaces and ``_``)."""
    special = _GO_SPECIAL.get(text.lower())
    if special is not None:
        return special
    try:
        if _GO_DECIMAL.fullmatch(text):
            value = float(text)
        elif _GO_HEX.fullmatch(text):
            value = float.fromhex(text)
        else:
            raise _go_error("ParseFloat", text, "invalid syntax")
    except OverflowError:
        value = math.inf
    if math.isinf(value):
        raise _go_error("ParseFloat", text, "value out of range")
    return value


def _restart(text: str) -> str | None:
    if text not in ("ipop", "bipop", "none"):
        raise ValueError(f"invalid restart_strategy: '{text}'")
    return None if text == "none" else text


GOPTUNA: dict[str, dict[str, Rule]] = {
    "cmaes": {
        "random_state": Rule(_go_int, None),  # unset: the search's seed (Goptuna's is 0)
        "sigma": Rule(
            _go_float,
            0.0,
            then=((lambda v: v != math.inf, "sigma must be a finite number, got {v}"),),
        ),  # Goptuna uses an infinite sigma, and its CMA-ES's numbers turn NaN; so did ours
        "restart_strategy": Rule(_restart, None),
    },
    "sobol": {},
}
"""The Goptuna service's algorithms: unknown names are ignored, as Goptuna does."""
GOPTUNA_FAILURE = "Failed to create goptuna study and search space: "
ALGORITHMS = ("tpe", "multivariate-tpe", "cmaes", "sobol", "bayesianoptimization")
"""The Optuna-backed algorithms, whose samplers ``samplers.FACTORIES`` makes: named here, so
that a search of any other algorithm is built and an algorithm's name checked without importing
Optuna."""


def read(algorithm: str, given: Mapping[str, str]) -> dict[str, Any]:
    """The algorithm's settings with defaults filled in; raises ``SettingsError`` with Katib's
    message for the first setting (in the Experiment's order) that fails."""
    if algorithm in GOPTUNA:
        return _read_goptuna(GOPTUNA[algorithm], given)
    rules = RULES[algorithm]
    values = {name: rule.default for name, rule in rules.items()}
    for name, text in given.items():
        rule = rules.get(name)
        if rule is None:
            raise SettingsError(f"unknown setting {name} for algorithm {algorithm}")
        try:
            value = rule.parse(text)
        except ValueError as error:
            raise SettingsError(f"failed to validate {name}({text}): {error}") from None
        failure = rule.failure(value)
        if failure is not None:
            raise SettingsError(failure.format(v=text))
        values[name] = value
    return values


def _read_goptuna(rules: Mapping[str, Rule], given: Mapping[str, str]) -> dict[str, Any]:
    values = {name: rule.default for name, rule in rules.items()}
    for name, rule in rules.items():
        if name in given:
            try:
                values[name] = rule.parse(given[name])
            except ValueError as error:
                raise SettingsError(GOPTUNA_FAILURE + str(error)) from None
            failure = rule.failure(values[name])
            if failure is not None:
                raise SettingsError(failure.format(v=given[name]))
    return values
