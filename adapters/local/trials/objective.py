"""The synthetic objective: metrics for a Trial without running any training.

The default local runtime cannot run the example's image (PyTorch MNIST), yet the Experiment must
see believable, reproducible metrics. So a Trial's metrics are a pure function of its parameter
assignments and its objective, with no randomness and no clock: the same assignments always give
the same metrics, in any process (hashes are SHA-256, never Python's salted ``hash``).

The function is a smooth bowl. Each parameter ``p`` with value ``x`` contributes a penalty in
``[0, 1]``:

* a number: ``1 - 1 / (1 + d**2)`` with ``d = s(x) - s(c_p)``, where ``s(x) = asinh(x / 0.001) /
  ln 10`` is a signed log scale (about ``log10(x) + 3.3`` for ``x`` well above 0.001, so ``d`` is
  a distance in decades, which suits learning rates and momenta alike), and the optimum
  ``c_p = 10 ** (-3 + 3 * u(p))`` lies in ``[0.001, 1)`` at a place chosen by the parameter's name
  (``u`` maps strings to ``[0, 1)`` through SHA-256);
* anything else (a categorical value): ``0.5 * u(p, x)``, a fixed penalty per category.

With ``b`` the mean penalty (0 for no parameters), a metric of the *minimize* form is
``0.05 + b`` and one of the *maximize* form is ``0.95 / (1 + b)``. The objective metric takes the
form of the objective's ``type``; an additional metric takes the maximize form when its name
sounds like a score (``acc``, ``auc``, ``precision``, ``recall``, ``f1``, ``score``, ``reward``),
else the minimize form, and its ``b`` is scaled by ``0.75 + 0.5 * u(name)`` so that metrics differ.

Hence a minimized metric never goes below the floor 0.05 and a maximized one never above 0.95:
goals like the example's ``loss <= 0.001`` are never reached, and Katib's from-volume example
ends by ``maxTrialCount``, as it does on a real cluster after an epoch of MNIST.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

from katib_resume.adapters.local.trials.metrics import MetricRecord, metric_names
from katib_resume.adapters.local.trials.outcome import Outcome

FLOOR = 0.05
CEILING = 1.0 - FLOOR
_SCORE_WORDS = ("acc", "auc", "precision", "recall", "f1", "score", "reward")


def unit(*parts: str) -> float:
    """A stable pseudo-random number in ``[0, 1)`` for the given strings."""
    digest = hashlib.sha256("\0".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _log_scale(x: float) -> float:
    return math.asinh(x / 1e-3) / math.log(10)


def penalty(name: str, value: str) -> float:
    """One parameter's share of the bowl, in ``[0, 1]`` (see the module docstring)."""
    try:
        x = float(value)
    except ValueError:
        x = math.nan
    if not math.isfinite(x):
        return 0.5 * unit(name, value)
    optimum = 10 ** (-3 + 3 * unit(name))
    d = _log_scale(x) - _log_scale(optimum)
    return 1 - 1 / (1 + d * d)  # not d²/(1 + d²), which is NaN for a huge value


def bowl(assignments: Mapping[str, str]) -> float:
    """The mean penalty of all assignments: 0 at the optimum, at most 1 anywhere."""
    if not assignments:
        return 0.0
    return sum(penalty(name, value) for name, value in assignments.items()) / len(assignments)


def synthetic_metrics(
    assignments: Mapping[str, str], metric_names: Sequence[str], objective_type: str = "minimize"
) -> dict[str, float]:
    """A value for every metric of ``metric_names`` (the first is the objective metric)."""
    base = bowl(assignments)
    values: dict[str, float] = {}
    for index, name in enumerate(metric_names):
        if index == 0:
            maximize, b = objective_type == "maximize", base
        else:
            maximize = any(word in name.lower() for word in _SCORE_WORDS)
            b = base * (0.75 + 0.5 * unit(name))
        values[name] = CEILING / (1 + b) if maximize else FLOOR + b
    return values


def assignments_of(spec: Mapping[str, Any]) -> dict[str, str]:
    """``spec.parameterAssignments`` as a name-to-value mapping (malformed entries skipped)."""
    found: dict[str, str] = {}
    for entry in spec.get("parameterAssignments") or ():
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            found[entry["name"]] = str(entry.get("value", ""))
    return found


def synthetic_outcome(spec: Mapping[str, Any]) -> Outcome:
    """What a Trial with this spec reports in synthetic mode: one sample per metric."""
    objective = spec.get("objective")
    objective = objective if isinstance(objective, dict) else {}
    names = metric_names(objective)
    values = synthetic_metrics(assignments_of(spec), names, str(objective.get("type", "")))
    return Outcome.observed(
        [MetricRecord.of_samples(name, [format(value, ".6g")]) for name, value in values.items()]
    )
