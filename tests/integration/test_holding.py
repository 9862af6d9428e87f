"""``bootstrap.holding``: a command done by the ``run`` holding its state directory, on that
run's own runtime (``app/cli/serving.py``)."""

from __future__ import annotations

from pathlib import Path

from katib_resume.app.cli.main import main
from katib_resume.app.embedded.bootstrap import holding, session
from katib_resume.app.embedded.options import Options
from katib_resume.app.loop.keys import Key


def test_a_command_done_for_another_leaves_the_holders_experiments_queued(tmp_path: Path) -> None:
    """While a nested command runs, the holder advances only what that command names, so the
    changes of its own Experiments meanwhile queue nothing; they are queued when it ends."""
    state = tmp_path / "state"
    example = Path(__file__).resolve().parents[2] / "examples" / "from-volume-resume.yaml"
    assert main(["apply", "-f", str(example), "--state-dir", str(state)]) == 0
    own = Key("kubeflow", "from-volume-resume")
    with session(Options(state_dir=state, focus=frozenset({(own.namespace, own.name)}))) as held:
        while held.controller.due():
            held.controller.step()
        with holding(held, state), session(Options(state_dir=state, focus=frozenset())) as nested:
            assert nested is held and held.focus == frozenset()
        assert held.focus == frozenset({own})
        assert held.controller.queue.pop(held.clock.now()) == own
