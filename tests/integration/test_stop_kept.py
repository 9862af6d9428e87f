"""A stop signal is never lost (``app/embedded/stopping.py``): the ``KeyboardInterrupt`` of a
SIGTERM, a SIGINT or a SIGHUP, should code between C and Python take it for an error of its own
and go on, is raised again by the runtime's next step, and a command that begins after it has
none."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from katib_resume.app.cli.main import main
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.options import Options

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "from-volume-resume.yaml"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_whose_interrupt_was_swallowed_stops_the_next_step(
    tmp_path: Path, stop: signal.Signals
) -> None:
    state = tmp_path / "state"
    assert main(["apply", "-f", str(EXAMPLE), "--state-dir", str(state)]) == 0
    with session(Options(state_dir=state)) as runtime:
        runtime.step()
        swallowed = False
        try:  # as ``pydantic-core`` does in a serializer: the interrupt taken for an error
            os.kill(os.getpid(), stop)  # (its handler runs before this returns)
        except KeyboardInterrupt:
            swallowed = True
        assert swallowed
        with pytest.raises(KeyboardInterrupt, match=stop.name):
            runtime.step()
        with pytest.raises(KeyboardInterrupt):  # every step after it too, until the end
            runtime.step()
    with session(Options(state_dir=state)) as runtime:  # the next command: no stop received
        runtime.step()
