"""PBT's checkpoint directories on the suggestion volume.

Katib's PBT service gives every Trial a directory ``/opt/katib/data/<experiment>/<trial>`` on the
suggestion volume: empty for a Trial without a parent, a copy of the parent's directory
otherwise. Katib's pod webhook mounts that directory (sub-path ``<experiment>/<trial>`` of the
Suggestion's claim) into the Trial's primary container at the path of the
``suggestion_trial_dir`` setting, so the training code loads its parent's checkpoint from there
and saves its own there. The server's data directory is the experiment's directory
(``<data-dir>/<experiment>`` for ``suggestion-server``), so a Trial's directory is
``<data_dir>/<trial>``, beside the state file.

A directory is prepared once, when its assignment is first handed out: Katib's service deleted
and copied it again whenever it queued the Trial, which would wipe a checkpoint a running Trial
had written if a reply were served again. The copy is made under a temporary name and renamed
into place, so a crash mid-copy leaves no half directory under the Trial's name (the next call
makes it again). A parent whose directory is missing (the Trial wrote nothing, or the volume was
replaced) gives an empty directory: the child trains from scratch rather than failing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PARTIAL = ".partial-"


def prepare(root: Path, trial: str, parent: str | None) -> None:
    """Make ``root/trial`` (from ``root/parent`` when given) unless it already exists."""
    target = root / trial
    if target.exists():
        return
    root.mkdir(parents=True, exist_ok=True)
    temporary = root / f"{PARTIAL}{trial}"
    shutil.rmtree(temporary, ignore_errors=True)
    source = None if parent is None else root / parent
    if source is not None and source.is_dir():
        shutil.copytree(source, temporary, symlinks=True)
    else:
        temporary.mkdir()
    os.replace(temporary, target)
