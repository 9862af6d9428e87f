"""A restart from blocks of sealed Trials does exactly what a restart without them does.

When a command ends, each Experiment's settled Trials are sealed into blocks with a note of
their folds (``app.embedded.sealing``); the next command holds the blocks unread and its books
start from the notes. Sealing is an optimisation only: the same commands on a state directory
whose runtimes seal and on one whose runtimes never do end in the same cluster, write for
write, whatever happened to the sealed Trials in between (one deleted, the objective edited,
the Experiment deleted), and the blocks' members are read only when something needs them.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from katib_resume.adapters.fake.persistence import STATE_FILE, read
from katib_resume.app.cli.delete import delete_experiment
from katib_resume.app.cli.edit import apply_edit
from katib_resume.app.cli.run import create, run_to_completion
from katib_resume.app.embedded import sealing
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.options import Options
from katib_resume.app.embedded.runtime import Runtime
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.model import Experiment
from tests.integration.test_kept_restart import _told

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "from-volume-resume.yaml"
NAME, NS = "from-volume-resume", "kubeflow"
EXPERIMENT = ObjectRef(API_VERSION, "Experiment", NS, NAME)
Step = Callable[[Runtime], None]


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Blocks of a few Trials, so that small runs seal, merge and note again."""
    monkeypatch.setattr(sealing, "SEAL_AT", 2)
    yield


def _experiment(trials: int, algorithm: str = "random") -> Experiment:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["spec"]["maxTrialCount"] = trials
    manifest["spec"]["algorithm"] = {"algorithmName": algorithm}
    return Experiment.model_validate(manifest)


def _blocks(state: Path) -> list[tuple[int, int]]:
    db = sqlite3.connect(state / STATE_FILE)
    try:
        return db.execute("SELECT id, size FROM blocks ORDER BY id").fetchall()
    finally:
        db.close()


def _resume(budget: int) -> Step:
    def step(runtime: Runtime) -> None:
        apply_edit(runtime, NS, NAME, {"maxTrialCount": budget})
        run_to_completion(runtime, EXPERIMENT)

    return step


def _run(state: Path, steps: list[Step], *, seal: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``steps``, a command (a runtime) each, on ``state``; never sealing unless ``seal``."""
    monkeypatch.setattr(sealing, "SEAL_AT", 2 if seal else 10**9)
    for step in steps:
        with session(Options(state)) as runtime:
            step(runtime)


def _same_ends(tmp_path: Path, steps: list[Step], monkeypatch: pytest.MonkeyPatch) -> Path:
    """Both ways of running ``steps`` end in the same cluster; the sealed state's path."""
    sealed, plain = tmp_path / "sealed", tmp_path / "plain"
    _run(sealed, steps, seal=True, monkeypatch=monkeypatch)
    _run(plain, steps, seal=False, monkeypatch=monkeypatch)
    assert _blocks(plain) == []
    one, two = read(sealed), read(plain)
    assert one.store.to_dict() == two.store.to_dict()
    assert _told(one, sealed, plain) == _told(two, sealed, plain)
    return sealed


def _first(budget: int, algorithm: str = "random") -> Step:
    def step(runtime: Runtime) -> None:
        run_to_completion(runtime, create(runtime, _experiment(budget, algorithm), None, 1))

    return step


@pytest.mark.parametrize("algorithm", ["random", "tpe", "cmaes"])
def test_resumes_from_blocks_end_as_resumes_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, algorithm: str
) -> None:
    """The results an algorithm reads (tpe and cmaes read them all, random none) come from the
    notes, and give the same assignments."""
    steps = [_first(4, algorithm), _resume(6), _resume(9), _resume(12), _resume(13)]
    sealed = _same_ends(tmp_path, steps, monkeypatch)
    blocks = _blocks(sealed)
    assert blocks and sum(size for _, size in blocks) >= 12  # all but a Trial or so sealed
    assert len(blocks) <= sealing.MOST


def test_a_deleted_sealed_trial_leaves_its_block_and_the_block_is_noted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def delete_one_trial(runtime: Runtime) -> None:
        (trial,) = [
            t
            for t in runtime.cluster.list(API_VERSION, "Trial", NS, {})
            if t["metadata"]["name"].endswith(min(_names(runtime))[-3:])
        ]
        runtime.cluster.delete(ObjectRef.of(trial), trial["metadata"]["uid"])
        run_to_completion(runtime, EXPERIMENT)

    steps = [_first(6), delete_one_trial, _resume(9), _resume(10)]
    sealed = _same_ends(tmp_path, steps, monkeypatch)
    assert _blocks(sealed)


def _names(runtime: Runtime) -> list[str]:
    return [t["metadata"]["name"] for t in runtime.cluster.list(API_VERSION, "Trial", NS, {})]


def test_an_edited_objective_reads_the_blocks_and_notes_them_for_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def new_goal(runtime: Runtime) -> None:
        experiment = runtime.cluster.get(EXPERIMENT)
        objective = experiment["spec"]["objective"]
        objective["goal"] = 0.0002  # another objective, no closer to reached
        runtime.cluster.update(experiment)
        apply_edit(runtime, NS, NAME, {"maxTrialCount": 8})
        run_to_completion(runtime, EXPERIMENT)

    steps = [_first(5), new_goal, _resume(10)]
    _same_ends(tmp_path, steps, monkeypatch)


def test_a_deleted_experiment_takes_its_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def delete(runtime: Runtime) -> None:
        delete_experiment(runtime, NS, NAME)

    sealed = _same_ends(tmp_path, [_first(5), delete], monkeypatch)
    assert _blocks(sealed) == []
    assert read(sealed).store.of_kind(API_VERSION, "Trial") == []


def test_a_restart_reads_no_sealed_trial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resuming from blocks with fitting notes reads none of their members: the store opens
    with the blocks unread, and they are still unread when the new Trials are done."""
    state = tmp_path / "state"
    _run(state, [_first(8)], seal=True, monkeypatch=monkeypatch)
    assert _blocks(state)
    with session(Options(state)) as runtime:
        assert runtime.cluster.store.blocks
        unread = set(runtime.cluster.store.blocks)
        _resume(10)(runtime)
        assert set(runtime.cluster.store.blocks) == unread
        shutil.copy  # noqa: B018 (the module's imports stay used)


def test_a_command_stopped_with_trials_running_seals_only_the_settled_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command that ends while Trials run (Ctrl-C) seals the settled ones only: the running
    ones, their Jobs still there, stay outside any block, and the next command finishes them."""

    def interrupted(runtime: Runtime) -> None:
        apply_edit(runtime, NS, NAME, {"maxTrialCount": 12})
        runtime.run_until(lambda: len(_names(runtime)) > 8, max_steps=200)

    steps = [_first(6), interrupted, _resume(12)]
    sealed = tmp_path / "sealed"
    _run(sealed, steps[:2], seal=True, monkeypatch=monkeypatch)
    cluster = read(sealed)
    running = [
        t["metadata"]["name"]
        for t in cluster.store.of_kind(API_VERSION, "Trial")
        if not any(c.get("type") == "Succeeded" for c in t.get("status", {}).get("conditions", []))
    ]
    assert running  # the command did end with Trials unfinished
    db = sqlite3.connect(sealed / STATE_FILE)
    in_blocks = {name for (name,) in db.execute("SELECT name FROM objects WHERE block IS NOT NULL")}
    db.close()
    assert in_blocks and not in_blocks & set(running)
    shutil.rmtree(sealed)
    _same_ends(tmp_path, steps, monkeypatch)
