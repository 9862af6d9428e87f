"""Every restart sequence on the whole embedded runtime: a Hypothesis machine of world events.

Rules are what happens to a running Experiment: the controller reconciles, Trials finish or
fail, the suggestion Deployment flaps, the clock jumps, the user raises the budget (through
admission) or deletes the Experiment, the API server answers with conflicts and errors or loses a
response, the controller process dies between two writes, and Kubernetes' own controllers lag
(a late garbage collector, a slow binder, a crashed kubelet). ``restart_cycles`` is a macro
rule (run to completion, raise the budget, n times) that puts depth into one shrinkable integer.

Invariants hold after every step; at teardown the faults stop and the runtime must reach the
fixed point the policy requires within a bounded number of steps.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from katib_resume.app.loop.keys import Key
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from tests.support.sim import CHILD, NAMESPACE, PV_NAME, Sim, local_config

LIFECYCLES = int(os.environ.get("RESTART_LIFECYCLES", "2000"))
LOCAL_SHARE = 8  # the local volume mode explores an eighth as many lifecycles (FromVolume only)
MAX_BUDGET = 12  # keeps a lifecycle small: depth comes from restarts, not from trial counts


class RestartSequences(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="katib-resume-sm-"))
        self.sim: Sim
        self.pvc_uid: str | None = None
        self.deleted = False
        self.local = False
        self.issued: tuple[str | None, list[str]] = (None, [])
        """The Suggestion's UID and its assignments' names at the last step."""
        self.restarted_at: str | None = None
        """``Restarting``'s lastTransitionTime, once the Experiment has been restarted."""

    @initialize(
        policy=st.sampled_from(["Never", "LongRunning", "FromVolume"]),
        budget=st.integers(1, 5),
        parallel=st.integers(1, 3),
        seed=st.integers(0, 3),
    )
    def start(self, policy: str, budget: int, parallel: int, seed: int) -> None:
        self.sim = Sim(
            self.root, policy, max_trials=budget, parallel=min(parallel, budget), seed=seed
        )

    # -- world events ------------------------------------------------------------------------
    def _step(self) -> None:
        self.sim.step()

    @rule()
    def reconcile(self) -> None:
        self._step()

    @rule(steps=st.integers(1, 8))
    def run_a_while(self, steps: int) -> None:
        for _ in range(steps):
            self._step()

    @rule(seconds=st.sampled_from([5, 31, 300]))
    def clock_jumps(self, seconds: int) -> None:
        self.sim.cluster.clock.advance(seconds)

    @rule(data=st.data())
    def a_trial_fails(self, data: st.DataObject) -> None:
        active = [t for t in self.sim.trials() if not _terminal(t)]
        if active:
            trial = data.draw(st.sampled_from(active))
            status = {"conditions": [{"type": "Failed", "status": "True", "reason": "TrialFailed"}]}
            self.sim.cluster.api.update_status(ObjectRef.of(trial), status, None)

    @rule(hold=st.booleans())
    def deployment_flaps(self, hold: bool) -> None:
        if self.sim.deployment() is not None:
            self.sim.world.kubelet.set_unavailable(NAMESPACE, CHILD, hold=hold)

    @rule()
    def deployment_recovers(self) -> None:
        if self.sim.deployment() is not None:
            self.sim.world.kubelet.release(NAMESPACE, CHILD)

    def _budget(self) -> int:
        experiment = self.sim.experiment() or {}
        return int(experiment.get("spec", {}).get("maxTrialCount") or MAX_BUDGET)

    @precondition(lambda self: not self.deleted and self._budget() < MAX_BUDGET)
    @rule(by=st.integers(1, 4))
    def user_raises_budget(self, by: int) -> None:
        self.sim.raise_budget(by)

    @precondition(lambda self: not self.deleted and self._budget() < MAX_BUDGET)
    @rule(cycles=st.integers(1, 4))
    def restart_cycles(self, cycles: int) -> None:
        """Run to completion and raise the budget, ``cycles`` times (the world heals first:
        a Deployment held down would keep the Experiment from ever completing)."""
        self.deployment_recovers()
        for _ in range(cycles):
            self.sim.settle()
            if self._budget() < MAX_BUDGET:
                self.sim.raise_budget(2)

    @precondition(lambda self: not self.deleted)
    @rule()
    def user_deletes(self) -> None:
        experiment = self.sim.experiment()
        if experiment is not None:
            ref = ObjectRef(API_VERSION, "Experiment", NAMESPACE, experiment["metadata"]["name"])
            self.sim.cluster.api.delete(ref, experiment["metadata"]["uid"])
            self.deleted = True

    @rule(kind=st.sampled_from(["conflict", "error", "lost", "stale"]), n=st.integers(1, 3))
    def api_misbehaves(self, kind: str, n: int) -> None:
        faults = self.sim.cluster.faults
        if kind == "conflict":
            faults.conflict_next_write()
        elif kind == "error":
            faults.fail_next_writes(n)
        elif kind == "lost":
            faults.lose_next_response()
        else:
            faults.stale_reads(n)

    @rule(writes=st.integers(1, 6))
    def controller_crashes_between_writes(self, writes: int) -> None:
        self.sim.cluster.faults.crash_after_writes(writes)

    @rule(controller=st.sampled_from(["gc", "binder", "kubelet"]), ticks=st.integers(1, 4))
    def kubernetes_lags(self, controller: str, ticks: int) -> None:
        """Kubernetes' own controllers are late: the garbage collector or the binder skip
        ``ticks`` ticks, or the kubelet crashes (every pod down) for as long."""
        faults = self.sim.world.faults
        if controller == "gc":
            faults.skip_gc(ticks)
        elif controller == "binder":
            faults.slow_binder(ticks)
        else:
            faults.crash_kubelet(ticks)

    # -- invariants ----------------------------------------------------------------------------
    @invariant()
    def conditions_are_well_formed(self) -> None:
        for obj in (self.sim.experiment(), self.sim.suggestion()):
            conditions = (obj or {}).get("status", {}).get("conditions", [])
            types = [c["type"] for c in conditions]
            assert len(types) == len(set(types)), types
            assert all(c["status"] in ("True", "False", "Unknown") for c in conditions)

    @invariant()
    def restarting_once_true_stays_true_and_only_moves_on(self) -> None:
        """Kept after the restarted run (a polling client finds it), renewed by each restart."""
        found = [
            c
            for c in (self.sim.experiment() or {}).get("status", {}).get("conditions", [])
            if c["type"] == "Restarting"
        ]
        if self.restarted_at is not None and not self.deleted:
            [condition] = found
            assert condition["status"] == "True"
            assert condition["lastTransitionTime"] >= self.restarted_at
        if found:
            self.restarted_at = found[0]["lastTransitionTime"]

    @invariant()
    def conditions_mean_what_they_say(self) -> None:
        """What one status write always says together, whatever the controller has yet to see:
        a completed object is not running, a running Suggestion's Deployment was ready (a
        Failed one keeps Katib's DeploymentReady True: the service ran and refused)."""
        experiment, suggestion = self.sim.experiment(), self.sim.suggestion()
        done = [t for t in ("Succeeded", "Failed") if Sim.true(experiment, t)]
        assert len(done) <= 1, done
        if done:
            assert not Sim.true(experiment, "Running")
            assert (experiment or {}).get("status", {}).get("completionTime")
        if Sim.true(suggestion, "Running"):
            assert Sim.true(suggestion, "DeploymentReady") and Sim.true(suggestion, "Created")
            assert not Sim.true(suggestion, "Succeeded") and not Sim.true(suggestion, "Failed")
        if Sim.true(suggestion, "Succeeded"):
            assert not Sim.true(suggestion, "DeploymentReady")
            assert not Sim.true(suggestion, "Failed")

    @invariant()
    def no_assignment_repeats(self) -> None:
        """Each assignment is issued once, under its own name, and a Suggestion's list only
        grows: a restart continues the sequence, it never starts it again."""
        suggestion = self.sim.suggestion()
        issued = (suggestion or {}).get("status", {}).get("suggestions", [])
        names = [a["name"] for a in issued]
        assert len(names) == len(set(names)), names
        points = self.sim.assignments()
        assert len(points) == len(set(points)), points
        uid = (suggestion or {}).get("metadata", {}).get("uid")
        if uid is not None and uid == self.issued[0]:
            assert names[: len(self.issued[1])] == self.issued[1], "the history only grows"
        self.issued = (uid, names)

    @invariant()
    def running_means_a_live_available_service(self) -> None:
        controller = self.sim.runtime.controller
        unseen = self.sim.runtime.pump()  # world changes the controller has not been told of
        if unseen or controller.failures or controller.due():
            return  # the controller has not caught up with the world yet (an armed fault that
            # has not fired changes nothing: the invariant holds while it waits)
        if self.sim.experiment() is None:
            return  # an orphan the garbage collector has yet to remove (``kubernetes_lags``):
            # its Experiment is gone, so nothing plans for it or reads its status any more
        if Sim.true(self.sim.suggestion(), "Running"):
            deployment, service = self.sim.deployment(), self.sim.service()
            assert deployment is not None and service is not None
            assert "deletionTimestamp" not in deployment["metadata"]
            assert Sim.true(deployment, "Available")

    @invariant()
    def the_volume_is_never_lost_or_replaced(self) -> None:
        if self.sim.policy != "FromVolume" or self.sim.experiment() is None or self.deleted:
            return
        pvc = self.sim.pvc()
        if self.pvc_uid is None and pvc is not None:
            self.pvc_uid = pvc["metadata"]["uid"]
        if self.pvc_uid is not None:
            assert pvc is not None and pvc["metadata"]["uid"] == self.pvc_uid

    @invariant()
    def a_bound_claim_has_its_own_volume(self) -> None:
        """The claim is bound to the PV made for it: the local one, or a provisioned one."""
        pvc = self.sim.pvc()
        volume = (pvc or {}).get("spec", {}).get("volumeName")
        if pvc is None or pvc.get("status", {}).get("phase") != "Bound":
            return
        assert volume == PV_NAME if self.local else volume == f"pvc-{pvc['metadata']['uid']}"
        if self.local:
            pv = self.sim.get("PersistentVolume", PV_NAME, "v1")
            assert pv is not None
            assert pv["spec"]["hostPath"]["path"] == f"/tmp/katib/suggestions/{PV_NAME}"

    @invariant()
    def only_our_volume_is_mounted(self) -> None:
        deployment = self.sim.deployment()
        volumes = (deployment or {}).get("spec", {}).get("template", {}).get("spec", {})
        for volume in volumes.get("volumes", []):
            assert volume["persistentVolumeClaim"]["claimName"] == CHILD
        pvc, suggestion = self.sim.pvc(), self.sim.suggestion()
        if pvc is not None and suggestion is not None:
            owners = {r["uid"] for r in pvc["metadata"].get("ownerReferences", [])}
            assert owners == {suggestion["metadata"]["uid"]}

    @invariant()
    def never_more_trials_than_the_budget(self) -> None:
        experiment = self.sim.experiment()
        budget = (experiment or {}).get("spec", {}).get("maxTrialCount")
        if budget is not None and not self.deleted:
            assert len(self.sim.trials()) <= budget

    # -- teardown: the fixed point -------------------------------------------------------------
    def teardown(self) -> None:
        try:
            if hasattr(self, "sim"):
                self._reaches_fixed_point()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def _reaches_fixed_point(self) -> None:
        self.sim.cluster.faults.clear()
        self.sim.world.faults.clear()
        if self.sim.deployment() is not None:
            self.sim.world.kubelet.release(NAMESPACE, CHILD)
        self.sim.restart_controller()
        if self.deleted:
            left = self.sim.drain()
            assert not left, f"left behind: {[o['kind'] for o in left]}"
            assert not self._local_directory().exists(), "the directory is removed"
            return
        self.sim.settle(max_steps=500)
        experiment = self.sim.experiment()
        assert experiment is not None
        meta, status = experiment["metadata"], experiment.get("status", {})
        assert status.get("observedGeneration") == meta["generation"], "the status is current"
        self._counters_match_the_trials(status)
        suggestion = self.sim.suggestion()
        restartable = Sim.true(self.sim.experiment(), "Succeeded") and self.sim.policy != "Never"
        reason = _succeeded_reason(self.sim.experiment())
        keeps = (
            self.sim.policy == "LongRunning"
            and restartable
            and reason == "ExperimentMaxTrialsReached"
        )
        if keeps:
            assert Sim.true(suggestion, "Running") and self.sim.deployment() is not None
        else:
            assert self.sim.deployment() is None and self.sim.service() is None
        if self.sim.policy == "FromVolume":
            assert self.sim.pvc() is not None
            pv = self.sim.get("PersistentVolume", PV_NAME, "v1")
            assert (pv is not None) == self.local
        self.sim.runtime.controller.enqueue(Key(NAMESPACE, "from-volume-resume"))
        before = self.sim.runtime.controller.stats.writes
        self.sim.runtime.drain()
        assert self.sim.runtime.controller.stats.writes == before, "the fixed point writes nothing"

    def _counters_match_the_trials(self, status: Manifest) -> None:
        """At the fixed point the Experiment counts exactly the Trials there are."""
        trials = self.sim.trials()
        assert status.get("trials", 0) == len(trials)
        for phase, field in (("Succeeded", "trialsSucceeded"), ("Failed", "trialsFailed")):
            counted = sum(1 for t in trials if Sim.true(t, phase))
            assert status.get(field, 0) == counted, (field, status.get(field), counted)
        listed = set(status.get("succeededTrialList", []))
        assert listed == {t["metadata"]["name"] for t in trials if Sim.true(t, "Succeeded")}

    def _local_directory(self) -> Path:
        """Where the simulated node keeps the local PV's directory."""
        return self.root / "volumes" / "host" / "tmp" / "katib" / "suggestions" / PV_NAME


def _terminal(trial: Manifest) -> bool:
    return any(
        Sim.true(trial, kind)
        for kind in ("Succeeded", "Failed", "Killed", "EarlyStopped", "MetricsUnavailable")
    )


def _succeeded_reason(experiment: Manifest | None) -> str | None:
    for condition in (experiment or {}).get("status", {}).get("conditions", []):
        if condition["type"] == "Succeeded" and condition["status"] == "True":
            return str(condition.get("reason"))
    return None


class LocalVolumeRestartSequences(RestartSequences):
    """The same world events on the embedded runtime's default config, the local volume mode
    (``docs/local-volumes.md``): the claim is bound to the local PV made for it, and deleting
    the Experiment removes the PV and its directory."""

    @initialize(budget=st.integers(1, 5), parallel=st.integers(1, 3), seed=st.integers(0, 3))
    def start(self, budget: int, parallel: int, seed: int) -> None:
        self.local = True
        self.sim = Sim(
            self.root,
            "FromVolume",
            max_trials=budget,
            parallel=min(parallel, budget),
            seed=seed,
            config=local_config(),
        )


RestartSequences.TestCase.settings = settings(
    max_examples=LIFECYCLES, stateful_step_count=30, deadline=None
)
test_restart_sequences = RestartSequences.TestCase
LocalVolumeRestartSequences.TestCase.settings = settings(
    max_examples=max(1, LIFECYCLES // LOCAL_SHARE), stateful_step_count=30, deadline=None
)
test_restart_sequences_in_the_local_volume_mode = LocalVolumeRestartSequences.TestCase
