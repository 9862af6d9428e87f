"""A small shell around the pure trial planner: one Trial, its run objects and observation log.

It applies a ``TrialPlan``'s actions in order the way the reconcile loop does (a failing action
stops the pass, so the next pass retries it), and lets a test play the run object's status.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from katib_resume.adapters.fake import FakeClock
from katib_resume.adapters.fake.observations import FakeObservationLog
from katib_resume.core.actions import (
    AddFinalizer,
    Create,
    Delete,
    RecordEvent,
    RemoveFinalizer,
    Requeue,
    UpdateStatus,
)
from katib_resume.core.manifest import Manifest, format_time
from katib_resume.core.model.trial import Trial
from katib_resume.core.observation import metric_names
from katib_resume.core.plan.trial import TrialContext, decide_trial, wants_observation
from katib_resume.core.plan.trial_draft import (
    DeleteObservations,
    ReportObservation,
    TrialAction,
    TrialPlan,
    trial_key,
)
from katib_resume.core.ports import ClusterError


@dataclass
class TrialPlayer:
    trial: Manifest | None
    context: TrialContext = field(default_factory=TrialContext)
    clock: FakeClock = field(default_factory=FakeClock)
    log: FakeObservationLog = field(default_factory=FakeObservationLog)
    runs: dict[str, Manifest] = field(default_factory=dict)
    events: list[RecordEvent] = field(default_factory=list)
    created: int = 0
    last: TrialPlan | None = None

    @property
    def model(self) -> Trial:
        assert self.trial is not None, "the Trial is gone"
        return Trial.model_validate(self.trial)

    @property
    def name(self) -> str:
        assert self.trial is not None
        return str(self.trial["metadata"]["name"])

    def reconcile(self) -> TrialPlan:
        trial = self.model
        run = copy.deepcopy(self.runs.get(self.name))
        rows: tuple[Any, ...] = ()
        if wants_observation(trial, run):
            rows = self.log.get(trial_key(trial), metric_names(trial.spec.objective))
        plan = decide_trial(trial, run, rows, self.context, self.clock.now())
        self.last = plan
        for action in plan.actions:
            try:
                self._apply(action)
            except ClusterError:
                break
        return plan

    def settle(self, passes: int = 10) -> None:
        """Reconcile until a pass writes nothing and asks for no requeue."""
        for _ in range(passes):
            plan = self.reconcile()
            if self.trial is None or not any(_is_write(a) for a in plan.actions):
                return

    def set_run_status(self, status: Manifest) -> None:
        self.runs[self.name]["status"] = status

    def delete_trial(self, now: datetime) -> None:
        assert self.trial is not None
        self.trial["metadata"]["deletionTimestamp"] = format_time(now)

    def _apply(self, action: TrialAction) -> None:
        assert self.trial is not None
        meta = self.trial["metadata"]
        if isinstance(action, AddFinalizer | RemoveFinalizer):
            meta["finalizers"] = list(action.finalizers)
            if meta.get("deletionTimestamp") and not meta["finalizers"]:
                self.trial = None
        elif isinstance(action, Create):
            self.created += 1
            made = copy.deepcopy(action.manifest)
            made["metadata"]["uid"] = f"run-{self.created}"
            self.runs[made["metadata"]["name"]] = made
        elif isinstance(action, Delete):
            self.runs.pop(action.ref.name, None)
        elif isinstance(action, UpdateStatus):
            self.trial["status"] = copy.deepcopy(action.status)
        elif isinstance(action, ReportObservation):
            self.log.report(action.key, action.rows)
        elif isinstance(action, DeleteObservations):
            self.log.delete(action.key)
        elif isinstance(action, RecordEvent):
            self.events.append(action)
        else:
            assert isinstance(action, Requeue)


def _is_write(action: TrialAction) -> bool:
    return not isinstance(action, RecordEvent | Requeue)
