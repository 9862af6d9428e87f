"""The request's Trials in the order the service issued their assignments.

A service rebuilt over gRPC (its state file lost) has only the request's Trials, in no
particular order; by start time is a guess, and a poor one: the Trials of one batch are created
together and start in the same second. But the names our service gives its assignments are
derived from the seed and the assignment's index (``assignments.name_for``), so when every
Trial's name is one of those, their order is known exactly. An algorithm that replays the
history (random search's points, PBT's lineage: ``pbt_walk``) then finds its own sequence.
"""

from __future__ import annotations

from collections.abc import Sequence

from katib_resume.adapters.local.suggestion import SettingsError, SpaceError
from katib_resume.adapters.local.suggestion.algorithms import seed_of
from katib_resume.adapters.local.suggestion.assignments import name_for
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment

SLACK = 16
"""Names looked at beyond twice the history (assignments issued whose Trial was never made)."""


def in_issue_order(
    history: Sequence[Manifest], experiment: Experiment, seed: int
) -> list[Manifest]:
    """``history`` by issue order when every name is one our service gives, else as it is."""
    try:
        used = seed_of(experiment, seed)
    except (SettingsError, SpaceError):
        return list(history)
    wanted = {str(item.get("name", "")) for item in history}
    order: dict[str, int] = {}
    taken: set[str] = set()
    for index in range(2 * len(history) + SLACK):
        if len(order) == len(wanted):
            break
        name = name_for(experiment.metadata.name, used, index, taken)
        taken.add(name)
        if name in wanted:
            order[name] = index
    if len(order) < len(wanted):
        return list(history)
    return sorted(history, key=lambda item: order[str(item.get("name", ""))])
