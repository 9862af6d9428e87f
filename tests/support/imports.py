"""Which of the search libraries a command imports, run in a fresh process as a user runs it.

The suggestion service's libraries (Optuna, with NumPy; SciPy; scikit-learn) cost a process
their imports whether it uses them or not, so the tests of what a command imports run the
command itself (``katib_resume.app.cli.main``) in a new interpreter and read ``sys.modules``
when it returns.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEARCH_LIBRARIES = ("optuna", "scipy", "numpy", "sklearn")
"""What only the suggestion service uses: about a second of imports between them."""
MODEL_LIBRARIES = ("pydantic", "transitions", "yaml")
"""What reading and printing stored objects needs none of: the models, the lifecycle machines
and YAML (about two thirds of a short command's start-up)."""


def imported_by(
    argv: list[str], libraries: tuple[str, ...] = SEARCH_LIBRARIES
) -> tuple[int, list[str]]:
    """The exit code of ``katib-resume ARGV...`` and which of ``libraries`` it imported."""
    probe = (
        "import contextlib, io, sys; from katib_resume.app.cli.main import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()): code = main({argv!r})\n"
        f"print(code, *sorted(m for m in {libraries!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    code, *found = done.stdout.split()
    return int(code), found
