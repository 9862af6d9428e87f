"""``pbt``'s algorithm settings: Katib's names, rules and messages.

Katib's PBT service requires ``suggestion_trial_dir``, ``n_population`` and
``truncation_threshold`` (the UI offers ``/var/log/katib/checkpoints/``, 40 and 0.2) and reads an
optional ``resample_probability`` (absent: perturb every value by 0.8 or 1.2). Other names are
allowed and ignored, as Katib's service ignores them.

Two Katib bugs are fixed here. Any ``resample_probability`` made Katib's validation raise (it
compared the setting's string with an int), so the Suggestion failed with ``'<=' not supported
between instances of 'int' and 'str'``; here the value is read as a number and checked with the
message Katib meant to give. A value that is not a number made Katib's service raise (gRPC
UNKNOWN, with Python's text); here it is a validation failure naming the setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from katib_resume.adapters.local.suggestion.settings import SettingsError

REQUIRED = ("suggestion_trial_dir", "n_population", "truncation_threshold")
MIN_POPULATION = 5
POPULATION = f"Param(n_population) should be >= {MIN_POPULATION}"
THRESHOLD = "Param(truncation_threshold) should be between 0 and 1, inclusive"
RESAMPLE = (
    "Param(resample_probability) should be null to perturb at 0.8 or 1.2, or be between 0 and 1,"
    " inclusive, to resample"
)


@dataclass(frozen=True, slots=True)
class PbtSettings:
    trial_dir: str
    population: int
    threshold: float
    resample: float | None = None
    """``None``: explore by perturbing every value; else resample each with this probability."""


def read(given: Mapping[str, str]) -> PbtSettings:
    """The settings, checked in Katib's order; raises ``SettingsError`` with Katib's message."""
    missing = [name for name in REQUIRED if name not in given]
    if missing:
        raise SettingsError(f"Required params missing: {', '.join(missing)}")
    population = int(_parse(int, "n_population", given["n_population"]))
    if population < MIN_POPULATION:
        raise SettingsError(POPULATION)
    threshold = _parse(float, "truncation_threshold", given["truncation_threshold"])
    if not 0 <= threshold <= 1:
        raise SettingsError(THRESHOLD)
    resample = None
    if "resample_probability" in given:
        try:
            resample = float(given["resample_probability"])
        except ValueError:
            raise SettingsError(RESAMPLE) from None
        if not 0 <= resample <= 1:  # NaN fails this too
            raise SettingsError(RESAMPLE)
    return PbtSettings(given["suggestion_trial_dir"], population, threshold, resample)


def _parse(kind: type[int] | type[float], name: str, text: str) -> int | float:
    """``int(v)`` or ``float(v)`` as Katib reads it, a failure named as the other services do."""
    try:
        return kind(text)
    except ValueError as error:
        raise SettingsError(f"failed to validate {name}({text}): {error}") from None
