"""A restart in a process of its own, as a user meets it: ``python -m benchmarks.restart_process
ours STATE N``, ``... edit STATE BUDGET`` or ``... optuna STORAGE``.

``benchmarks.embedded`` times a restart in a process that has already imported everything; a
user's restart is a new process: the interpreter starting, the imports, then that work. ``timed``
runs one such process and reads what it cost from the kernel (``os.wait4``): seconds of the clock
and of CPU (the child's user and system time), and its peak resident memory. The peer's process
imports Optuna and nothing of ours (``benchmarks.optuna_peer``).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NAME, NS = "from-volume-resume", "kubeflow"
"""The Experiment of ``examples/from-volume-resume.yaml`` that ``benchmarks.embedded`` grows."""


def timed(*argv: str) -> dict[str, float]:
    """Run ``python -m benchmarks.restart_process ARGV...``; its clock, CPU and peak memory.

    Bytecode is written and read as on a user's machine (a checkout run with
    ``PYTHONDONTWRITEBYTECODE`` would compile every module in every process). The peak is the
    one the child reports (``_peak``): the kernel's own count for a child (``ru_maxrss``) starts
    from the parent's size, which it shares until it runs the new program."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "benchmarks.restart_process", *argv]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status):
            errors.seek(0)
            raise RuntimeError(f"{' '.join(argv)} failed: {errors.read().decode(errors='replace')}")
        out.seek(0)
        peak_kib = int(out.read().split()[-1])
    return {"s": seconds, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": peak_kib / 1024}


def _peak() -> None:
    """Print this process's peak resident memory in KiB (``VmHWM``), the last word it prints."""
    status = Path("/proc/self/status").read_text()
    print(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


def main(argv: list[str]) -> None:
    what: dict[str, Any] = {"ours": _ours, "edit": _edit, "optuna": _optuna}
    if not argv or argv[0] not in what:
        raise SystemExit(
            "usage: python -m benchmarks.restart_process ours STATE N | edit STATE BUDGET"
            " | optuna URL"
        )
    try:
        what[argv[0]](*argv[1:])
    finally:
        _peak()


def _ours(state: str, trials: str) -> None:
    from benchmarks.embedded import first_new_assignment

    logging.getLogger("katib_resume").setLevel(logging.ERROR)
    first_new_assignment(Path(state), int(trials))


def _edit(state: str, budget: str) -> None:
    """``katib-resume edit`` of the budget, the command itself."""
    from katib_resume.app.cli.main import main as cli

    argv = ["edit", "experiment", NAME, "-n", NS, "--max-trial-count", budget]
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli([*argv, "--state-dir", state])
    if code:
        raise SystemExit(f"edit failed with {code}")


def _optuna(storage: str) -> None:
    from benchmarks.optuna_peer import optuna_resume

    optuna_resume(storage)


if __name__ == "__main__":
    main(sys.argv[1:])
