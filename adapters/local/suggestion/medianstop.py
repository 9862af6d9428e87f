"""``medianstop``: Katib's early-stopping rule, its settings and messages
(docs/katib-contract.md#median-stop-early-stopping).

A Trial is stopped at its ``start_step``-th report when its best objective so far is worse than
the median of the other Trials' running averages at that step. The service answers with one rule
``{name: <objective metric>, value, comparison, startStep}`` once ``min_trials_required`` Trials
have succeeded; the metrics collector applies it. ``comparison`` is ``less`` for a maximised
objective (stop when below) and ``greater`` for a minimised one.

One Katib bug is fixed: Katib's service sends the *mean* of the per-Trial averages, though the
rule is called median and documented as such; here ``value`` is their median. Each succeeded
Trial's average is the mean of its first ``start_step`` observation-log values, as in Katib;
where they come from (Katib's DB manager) is the caller's business: ``rules`` takes them.
A Trial whose log has no value is left out (Katib divided by zero and lost the whole batch), and
so is one whose average is NaN: the service's one meaning of a NaN objective, a failure
(``nonfinite``); an infinite average is a value. The median of an even count is the mean of the
middle two, which is no number when they are ``-inf`` and ``inf``: then there is no rule yet.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from katib_resume.adapters.local.suggestion.nonfinite import admitted
from katib_resume.adapters.local.suggestion.settings import SettingsError
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import AlgorithmSpec

NAME = "medianstop"


@dataclass(frozen=True, slots=True)
class MedianStop:
    min_trials_required: int = 3
    start_step: int = 4


_RULES: dict[str, tuple[Callable[[int], bool], str]] = {
    "min_trials_required": (lambda v: v > 0, "min_trials_required must be greater than zero (>0)"),
    "start_step": (lambda v: v >= 1, "start_step must be greater or equal than one (>=1)"),
}


def read(spec: AlgorithmSpec) -> MedianStop:
    """The settings, or ``SettingsError`` with Katib's message for the first bad one."""
    if spec.algorithm_name != NAME:
        raise SettingsError(f"unknown algorithm name {spec.algorithm_name}")
    values: dict[str, int] = {}
    for setting in spec.algorithm_settings:
        if setting.name not in _RULES:
            raise SettingsError(f"unknown setting {setting.name} for algorithm {NAME}")
        try:
            value = int(setting.value)
        except ValueError as error:
            message = f"failed to validate {setting.name}({setting.value}): {error}"
            raise SettingsError(message) from None
        valid, message = _RULES[setting.name]
        if not valid(value):
            raise SettingsError(message)
        values[setting.name] = value
    return MedianStop(**values)


def running_average(log: Sequence[float], settings: MedianStop) -> float | None:
    """The mean of the first ``start_step`` values of a Trial's log (``None``: no value)."""
    first = list(log[: settings.start_step])
    return statistics.fmean(first) if first else None


def rules(
    settings: MedianStop, metric: str, maximize: bool, averages: Mapping[str, float]
) -> list[Manifest]:
    """The rule for new Trials, given the succeeded Trials' running averages (none if too few)."""
    valued = {name: value for name, value in averages.items() if admitted(value) is not None}
    if len(valued) < settings.min_trials_required:
        return []
    median = statistics.median(valued[name] for name in sorted(valued))
    if math.isnan(median):
        return []
    return [
        {
            "name": metric,
            "value": str(float(median)),
            "comparison": "less" if maximize else "greater",
            "startStep": settings.start_step,
        }
    ]
