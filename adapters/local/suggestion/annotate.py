"""What a search may add to the assignments it hands out, beyond their values.

Most searches return bare assignments. Population Based Training also tells each Trial where it
comes from (Katib's ``pbt.suggestion.katib.kubeflow.org/*`` labels, which the controller puts on
the Trial) and prepares its checkpoint directory on the suggestion volume. A search that does so
implements ``annotate``; the server calls it on every reply, re-served assignments included, so
a lost reply comes back with the same labels. When the server rebuilds from a trial history,
``relabel`` reads those labels back (the values alone cannot tell a lineage).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from katib_resume.core.manifest import Manifest


@runtime_checkable
class Annotating(Protocol):
    def annotate(
        self,
        cursor: Any,
        issued: Sequence[Manifest],
        first: int,
        items: Sequence[Manifest],
        *,
        results: Mapping[str, float | None],
        data_dir: Path | None,
    ) -> list[Manifest]:
        """``items`` (copies of ``issued[first:first + len(items)]``) completed, after making
        what they need on the volume (``data_dir``; ``None``: no volume); ``results`` by Trial
        name."""
        ...

    def relabel(self, cursor: Any, history: Sequence[Manifest]) -> Any:
        """The cursor ``replay`` gave for ``history``, with what its labels say."""
        ...
