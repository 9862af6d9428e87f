"""A benchmark's cases run each in a process of its own (``python -m benchmarks.algorithms``;
``child``, which ``benchmarks.grpc_service`` uses too, for a pod's restart).

One process running every case one after the other timed the later ones slower: a process that
has built many objects (histories of 5,000 assignments, Optuna's studies) runs the same code up
to twice as slowly (its heap's pages and the collector's passes over it), so a case's figures
depended on which cases ran before it. A child per case starts from the same empty heap, and
its figures are its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

KINDS = ("resume", "grown", "model-free")
"""What a case measures (``algorithms_resume``, ``algorithms_grown``, ``algorithms_plain``)."""
_ROOT = Path(__file__).resolve().parents[1]


def case(kind: str, algorithm: str, n: int, repeats: int) -> dict[str, Any]:
    """The figures of one case (``kind`` of ``KINDS``, at ``n``), measured by a child process
    (``python -m benchmarks.algorithms --case``); its progress goes to this one's stderr."""
    figures: dict[str, Any] = child(
        "benchmarks.algorithms", "--case", kind, algorithm, str(n), "--repeats", str(repeats)
    )
    return figures


def cases(
    label: str, algorithms: Iterable[str], sizes: Iterable[int], measure: Callable[[str, int], Any]
) -> dict[str, Any]:
    """``measure(algorithm, n)`` of each algorithm at each size, by ``"algorithm/n"``, each
    printed to stderr under ``label`` as it comes (a run takes minutes)."""
    report: dict[str, Any] = {}
    for algorithm in algorithms:
        for n in sizes:
            report[f"{algorithm}/{n}"] = entry = measure(algorithm, n)
            print(f"{label} {algorithm}/{n}: {entry}", file=sys.stderr)
    return report


def child(module: str, *args: str) -> Any:
    """What ``python -m module args`` prints on its stdout, as JSON (its stderr is this
    process's)."""
    command = [sys.executable, "-m", module, *args]
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, cwd=_ROOT)
    return json.loads(done.stdout)
