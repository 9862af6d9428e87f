r"""Metrics as Katib's StdOut collector reads them, and as a Trial's status reports them.

Katib's default collector scans the primary container's output for ``name=value`` pairs (its
default filter is ``([\w|-]+)\s*=\s*([+-]?\d*(\.\d+)?([Ee][+-]?\d+)?)``), keeps the pairs
whose name is the objective metric or an additional metric, and the trial controller reports, per
metric, the smallest, the largest and the last value seen in ``status.observation.metrics[]``
as ``{name, min, max, latest}`` strings; a metric never seen is reported as ``"unavailable"``.

We read the same lines a little more strictly, so that prose in a log is never taken for a
metric: a pair must start the line or follow a space or a comma, may have spaces around ``=``,
and its value must be a whole decimal number (``loss=0.3abc`` and ``loss=nan`` are junk, where
Katib's filter would read ``0.3`` and an empty string). A metric's strings are kept as printed,
so ``loss=0.30`` is reported as ``"0.30"``, exactly what the program said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from katib_resume.core.objective import UNAVAILABLE

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_PAIR = re.compile(rf"(?:^|(?<=[\s,]))(?P<name>[\w-]+)\s*=\s*(?P<value>{_NUMBER})(?=$|[\s,])")


@dataclass(frozen=True, slots=True)
class MetricRecord:
    """One entry of ``status.observation.metrics[]``: values as Katib writes them (strings)."""

    name: str
    min: str
    max: str
    latest: str

    @classmethod
    def unavailable(cls, name: str) -> MetricRecord:
        return cls(name, UNAVAILABLE, UNAVAILABLE, UNAVAILABLE)

    @classmethod
    def of_samples(cls, name: str, samples: Sequence[str]) -> MetricRecord:
        """Min and max compare numerically; ties keep the first string printed."""
        if not samples:
            return cls.unavailable(name)
        return cls(name, min(samples, key=float), max(samples, key=float), samples[-1])

    @property
    def available(self) -> bool:
        return self.latest != UNAVAILABLE

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "min": self.min, "max": self.max, "latest": self.latest}


def metric_names(objective: Mapping[str, Any]) -> tuple[str, ...]:
    """The objective metric first, then the additional ones; duplicates and blanks dropped."""
    names = [objective.get("objectiveMetricName"), *(objective.get("additionalMetricNames") or ())]
    return tuple(dict.fromkeys(name for name in names if isinstance(name, str) and name))


def parse_pairs(line: str) -> list[tuple[str, str]]:
    """Every well-formed ``name=value`` pair of one line, in order."""
    return [(match["name"], match["value"]) for match in _PAIR.finditer(line)]


def parse_stdout(text: str, names: Iterable[str]) -> tuple[MetricRecord, ...]:
    """One record per metric of ``names`` (in that order): min, max and latest over the output."""
    wanted = tuple(names)
    samples: dict[str, list[str]] = {name: [] for name in wanted}
    for line in text.splitlines():
        for name, value in parse_pairs(line):
            if name in samples:
                samples[name].append(value)
    return tuple(MetricRecord.of_samples(name, samples[name]) for name in wanted)
