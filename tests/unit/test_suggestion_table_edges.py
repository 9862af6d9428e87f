"""The Suggestion's state table seen through the planner (``core/lifecycle/suggestion.py``): a
transition's Event names both states by value, and a Blocked Suggestion is re-marked on every
pass, so its message follows the conflict it names."""

from __future__ import annotations

from dataclasses import replace

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.actions import RecordEvent, UpdateStatus
from katib_resume.core.model import Suggestion
from katib_resume.core.observed import Observed
from katib_resume.core.plan import Plan, plan
from tests.support.harness import shipped_config
from tests.unit.test_prebound import NS, _created, _ready, pv
from tests.unit.test_provision import experiment, suggestion


def test_the_first_transition_is_told_from_pending() -> None:
    running = suggestion(0, 0)
    status = {**running.status.to_dict(), "conditions": []}
    fresh = Suggestion.model_validate({**running.to_dict(), "status": status})
    result = plan(Observed(NS, "from-volume-resume", experiment(), fresh), shipped_config(), EPOCH)
    assert isinstance(result, Plan)
    events = [a for a in result.actions if isinstance(a, RecordEvent)]
    assert [(e.type, e.message) for e in events] == [("Normal", "Suggestion Pending -> Created")]


def test_a_blocked_suggestion_follows_the_conflict_it_names() -> None:
    created = _created(suggestion(0, 0))
    state = Observed(NS, "from-volume-resume", experiment(), created, claimants=(pv(),))
    first = plan(state, shipped_config(), EPOCH)
    assert isinstance(first, Plan)
    (write,) = [
        a for a in first.actions if isinstance(a, UpdateStatus) and a.ref.kind == "Suggestion"
    ]
    blocked = Suggestion.model_validate({**created.to_dict(), "status": write.status})
    moved = replace(state, suggestion=blocked, claimants=(pv("another"),))
    again = plan(moved, shipped_config(), EPOCH)
    assert isinstance(again, Plan) and again.suggestion is not None
    assert again.suggestion.after.value == "Blocked"
    assert _ready(again)["message"].startswith("PersistentVolume another is pre-bound to")
