"""What every embedded command shares, apart from the composition root that acts on it.

The readers (``get``, ``describe``) build it from their flags too, and they open no runtime:
importing ``bootstrap`` for it would import the suggestion services and katib-config's models.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Options:
    """What every embedded command shares (the common flags)."""

    state_dir: Path
    config: str | None = None
    seed: int = 1
    trial_command: bool = False
    focus: frozenset[tuple[str, str]] | None = None
    """(namespace, name) of the Experiments the command advances; ``None``: all of them."""
