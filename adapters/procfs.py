"""A process's start time, read from ``/proc``: how a recorded pid is told from a recycled one.

Both ways trials run as local processes (the fake cluster's pods, ``adapters.fake.groups``, and
the embedders' one-step runner, ``adapters.local.trials.group``) record a process group's leader
as its pid and start time, and after a crash stop the group only if that record still names the
same process. A pid alone could by then be anybody's.
"""

from __future__ import annotations

from pathlib import Path

UNKNOWN = "?"
"""The start time of a process that is gone, or of any process where ``/proc`` is absent."""


def started(pid: int) -> str:
    """The process's start time in clock ticks since boot, or ``UNKNOWN``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return UNKNOWN
    return stat.rsplit(")", 1)[1].split()[19]  # field 22; the name may hold spaces
