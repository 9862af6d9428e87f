"""A restart skips the settled Trials: their reconcile would have had nothing to do.

``app.embedded.settled.settled`` reads a Trial's manifest (no parse) to decide which finished
Trials a restart need not reconcile; these tests hold it to the trial planner: whatever history
brought a Trial there, and whatever was lost on the way (its finalizer, its ``completionTime``),
a Trial it calls settled, with its run object gone, gets a plan with no action.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from katib_resume.app.embedded.settled import settled
from katib_resume.core.manifest import Manifest
from katib_resume.core.model.trial import Trial
from katib_resume.core.plan.trial import TrialContext, decide_trial
from tests.property.test_trial_plan import _play, events
from tests.support.trial_player import TrialPlayer
from tests.support.trials import new_trial

damages = st.sets(st.sampled_from(["finalizer", "completionTime", "deleting", "early_stop"]))


def _damaged(trial: Manifest, damage: set[str]) -> Manifest:
    """``trial`` with some of what a settled Trial has taken away (or an early stop added)."""
    trial = copy.deepcopy(trial)
    meta, status = trial["metadata"], trial.setdefault("status", {})
    if "finalizer" in damage:
        meta["finalizers"] = []
    if "completionTime" in damage:
        status.pop("completionTime", None)
    if "deleting" in damage:
        meta["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    if "early_stop" in damage:
        conditions = status.setdefault("conditions", [])
        conditions.append({"type": "EarlyStopped", "status": "True", "reason": "Stopped"})
    return trial


@given(st.booleans(), st.booleans(), st.lists(events, max_size=25), damages)
def test_a_settled_trial_without_its_run_object_has_nothing_to_do(
    push: bool, retain: bool, history: list[tuple[str, Any]], damage: set[str]
) -> None:
    player = TrialPlayer(new_trial("t", collector="Push" if push else "StdOut", retain=retain))
    player.reconcile()
    for kind, value in history:
        _play(player, kind, value)
        player.reconcile()
    assert player.trial is not None
    trial = _damaged(player.trial, damage)
    event(f"settled: {settled(trial)}")
    if not settled(trial):
        return
    now = player.clock.now()
    decided = decide_trial(Trial.model_validate(trial), None, (), TrialContext(), now)
    assert decided.actions == ()


def test_settled_reads_the_terminal_trials_only() -> None:
    """A Trial that has not finished, or is being deleted, is never settled; a finished one
    with its finalizer and its completion time is."""
    player = TrialPlayer(new_trial("t"))
    player.reconcile()
    assert player.trial is not None and not settled(player.trial)
    done = _damaged(player.trial, set())
    done["status"]["conditions"] = [{"type": "Succeeded", "status": "True"}]
    done["status"]["completionTime"] = "2020-01-01T00:00:00Z"
    assert settled(done)
    assert not settled(_damaged(done, {"deleting"}))
    assert not settled(_damaged(done, {"finalizer"}))
    assert settled(_damaged(done, {"completionTime"}))  # only an early stop writes it late
    assert not settled(_damaged(done, {"completionTime", "early_stop"}))
