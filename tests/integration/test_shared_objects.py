"""The embedded runtime shares the fake API server's stored objects with its cache: nobody may
mutate them.

The informer's writes answer with the stored objects themselves (``FakeCluster.for_cache``) and
the watch hands every watcher the same objects, so the controller, the suggestion services and
the trial runner all read objects the API server still holds. Any of them mutating one would
change the cluster behind the API server's back, silently. These tests record every object the
store keeps, with a private copy taken at that moment, play whole lifecycles (restarts,
controller crashes, deletion) and then require every kept object to equal its copy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from katib_resume.adapters.fake.clone import clone
from katib_resume.adapters.fake.store import Store
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from tests.support.sim import Sim

Kept = list[tuple[Manifest, Manifest]]


@pytest.fixture
def kept(monkeypatch: pytest.MonkeyPatch) -> Kept:
    """Every object the store keeps (and every deleted object's last state), with a copy."""
    record: Kept = []
    keep_json, drop = Store.keep_json, Store.drop

    def keeping(self: Store, ref: ObjectRef, obj: Manifest) -> Manifest:
        stored = keep_json(self, ref, obj)
        record.append((stored, clone(stored)))
        return stored

    def dropping(self: Store, ref: ObjectRef) -> Manifest | None:
        gone = drop(self, ref)
        if self.log.events():
            last = self.log.events()[-1].object
            record.append((last, clone(last)))
        return gone

    monkeypatch.setattr(Store, "keep_json", keeping)
    monkeypatch.setattr(Store, "drop", dropping)
    return record


@pytest.mark.parametrize("policy", ["FromVolume", "LongRunning", "Never"])
def test_no_reader_mutates_a_stored_object(tmp_path: Path, kept: Kept, policy: str) -> None:
    sim = Sim(tmp_path, policy, max_trials=3, parallel=2)
    sim.settle()
    if policy != "Never":
        assert sim.raise_budget(2)
        sim.settle()
    assert sim.delete_experiment() == []
    assert len(kept) > 30  # every write of the lifecycle
    changed = [ObjectRef.of(obj) for obj, copy in kept if obj != copy]
    assert changed == []


def test_nor_does_a_controller_started_again(tmp_path: Path, kept: Kept) -> None:
    sim = Sim(tmp_path, "FromVolume", max_trials=4, parallel=2)
    for _ in range(3):
        sim.step()
    sim.restart_controller()
    sim.settle()
    sim.restart_controller()
    assert sim.raise_budget(2)
    sim.settle()
    assert sim.delete_experiment() == []
    assert [ObjectRef.of(obj) for obj, copy in kept if obj != copy] == []


def test_the_check_finds_a_mutation(tmp_path: Path, kept: Kept) -> None:
    """The check itself can fail: a reader that mutates what the cache handed it is caught."""
    sim = Sim(tmp_path, "FromVolume", max_trials=2, parallel=1)
    sim.settle()
    cached = sim.runtime.informer.get(ObjectRef.of(sim.experiment() or {}))
    cached["spec"]["maxTrialCount"] = 99
    assert [ObjectRef.of(obj) for obj, copy in kept if obj != copy] != []
