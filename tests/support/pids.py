"""Whether a process runs, read from ``/proc``: the trial-process tests' one probe."""

from __future__ import annotations

import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie nobody reaped yet (a container's init may not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_soon(pid: int, seconds: float = 10.0) -> bool:
    """Whether ``pid`` stops running within ``seconds``."""
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not alive(pid)
