"""A ``run`` stopped while its trial book folds what changed leaves a state the next run trusts.

A stop signal's ``KeyboardInterrupt`` lands between any two bytecodes, so also inside a
reconcile's ``TrialBook.read``: after the Experiment's page took the Trials' new versions from
the cache (its cursor moved past them) and before its ledger folded them in. The runtime's close
then kept each such Trial's old record at the Trial's new version (``app.embedded.kept``), and
the next ``run`` took the record unread: a Trial that had succeeded counted as still running,
for good (a finished Trial is not written again), so no new Trial was ever made and the run
gave up after an hour of simulated time with nothing to do (seen once in
``test_handover.py``'s handed-over run, whose holder was stopped by SIGTERM).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
import yaml

from katib_resume.app.cli.main import main
from katib_resume.app.embedded import driver
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.options import Options
from katib_resume.app.loop import trial_book
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.trial_ledger import TrialLedger, advance
from katib_resume.core.trial_phases import TrialPhase
from katib_resume.core.trials import classify

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "from-volume-resume.yaml"
NAME, NS, TRIALS = "from-volume-resume", "kubeflow", 12


def test_a_run_stopped_while_its_book_folds_a_finished_trial_leaves_the_next_run_able_to_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["spec"]["maxTrialCount"] = TRIALS
    experiment, state = tmp_path / "experiment.yaml", tmp_path / "state"
    experiment.write_text(yaml.safe_dump(manifest))
    assert main(["apply", "-f", str(experiment), "--state-dir", str(state)]) == 0

    def stopped(
        ledger: TrialLedger, of: Experiment, changed: Iterable[Trial], removed: Iterable[str]
    ) -> TrialLedger | None:
        """The stop lands as the first Trial that succeeded is folded in."""
        changed = tuple(changed)
        if any(classify(trial) is TrialPhase.SUCCEEDED for trial in changed):
            raise KeyboardInterrupt("SIGTERM")
        return advance(ledger, of, changed, removed)

    with monkeypatch.context() as patched:
        patched.setattr(trial_book, "advance", stopped)
        with pytest.raises(KeyboardInterrupt), session(Options(state_dir=state)) as runtime:
            for _ in range(100):
                runtime.step()
    monkeypatch.setattr(driver, "STALL_STEPS", 300)  # a stall is told in seconds, not minutes
    code = main(["run", NAME, "-n", NS, "--state-dir", str(state)])
    out, err = capsys.readouterr()
    assert code == 0, err[-2000:]
    assert f"Experiment {NS}/{NAME}: Succeeded=True (ExperimentMaxTrialsReached)" in out
    assert out.count("Succeeded\n") == TRIALS
