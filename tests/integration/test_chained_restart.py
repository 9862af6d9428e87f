"""A writer that holds the Suggestion's assignments undecoded does exactly what one decoding
them does (``adapters/fake/chained.py``).

The same commands on a state directory whose runtimes open the assignments as their stored
texts, and on one whose runtimes decode them at the open (``rows.SPLIT`` hidden from the
reader), end in the same cluster, write for write and Event for Event, whatever the algorithm
reads of the history. A restart to the first new assignment decodes none of them, and a status
write that appends a batch stores the batch's items alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake import chained, pages, rows
from katib_resume.adapters.fake.chained import Chained
from katib_resume.adapters.fake.codec import encode
from katib_resume.adapters.fake.lazy import DamagedObject
from katib_resume.adapters.fake.persistence import STATE_FILE, read
from katib_resume.app.cli.edit import apply_edit
from katib_resume.app.embedded import sealing
from katib_resume.app.embedded.bootstrap import session
from katib_resume.app.embedded.options import Options
from katib_resume.app.embedded.runtime import Runtime
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from tests.integration.test_kept_restart import _told
from tests.integration.test_sealed_restart import NAME, NS, Step, _first, _resume

SUGGESTION = ObjectRef(API_VERSION, "Suggestion", NS, NAME)


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(sealing, "SEAL_AT", 2)
    yield


def _run(state: Path, steps: list[Step], *, undecoded: bool, mp: pytest.MonkeyPatch) -> None:
    """``steps``, a command each, on ``state``; the assignments decoded at every open unless
    ``undecoded``."""
    with mp.context() as patched:
        if not undecoded:
            patched.setattr(rows, "SPLIT", {})
        for step in steps:
            with session(Options(state)) as runtime:
                held = _held(runtime)
                assert isinstance(held, Chained) is (undecoded and held is not None)
                step(runtime)


def _held(runtime: Runtime) -> Any:
    stored = runtime.cluster.store.find(SUGGESTION)
    return None if stored is None else stored["status"].get("suggestions")


@pytest.mark.parametrize("algorithm", ["random", "tpe", "cmaes"])
def test_a_writer_holding_the_assignments_undecoded_ends_as_one_decoding_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, algorithm: str
) -> None:
    """Random reads nothing of the history, tpe and cmaes the points they sample from: either
    way the same assignments, Trials, writes and Events."""
    steps = [_first(4, algorithm), _resume(6), _resume(9), _resume(10)]
    lazy, eager = tmp_path / "lazy", tmp_path / "eager"
    _run(lazy, steps, undecoded=True, mp=monkeypatch)
    _run(eager, steps, undecoded=False, mp=monkeypatch)
    one, two = read(lazy), read(eager)
    assert one.store.to_dict() == two.store.to_dict()
    assert _told(one, lazy, eager) == _told(two, lazy, eager)
    suggestion = one.store.find(SUGGESTION)
    assert suggestion is not None and len(suggestion["status"]["suggestions"]) >= 10


def test_a_restart_to_the_next_assignments_decodes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resuming a finished Experiment reads the held assignments' names, their first
    characters and their texts, never their decoded items: nothing is decoded, in the store
    nor in any copy handed out, until the Experiment is done again."""
    state = tmp_path / "state"
    _run(state, [_first(6)], undecoded=True, mp=monkeypatch)
    decoded: list[int] = []
    real = chained._decoded

    def counted(texts: Any) -> list[Any]:
        decoded.append(len(texts))
        return real(texts)

    monkeypatch.setattr(chained, "_decoded", counted)
    with session(Options(state)) as runtime:
        held = _held(runtime)
        assert isinstance(held, Chained) and len(held) == 6
        apply_edit(runtime, NS, NAME, {"maxTrialCount": 8})
        runtime.run_until(lambda: len(_held(runtime)) >= 8, max_steps=200)
        assert decoded == []
        assert _held(runtime).extends(held)  # the store's history extends the one opened


def test_a_status_write_appending_a_batch_stores_its_items_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write extends the stored chain by the new items' texts (its last page, ``pages.py``),
    none of the held ones is decoded nor encoded again, and a reader reads back the whole
    list."""
    state = tmp_path / "state"
    _run(state, [_first(3)], undecoded=True, mp=monkeypatch)
    before = _chain(state)
    new = {"name": "extra", "parameterAssignments": [{"name": "lr", "value": "0.5"}]}
    with session(Options(state)) as runtime:
        stored = runtime.cluster.store.find(SUGGESTION)
        assert stored is not None
        held = stored["status"]["suggestions"]
        status = {**stored["status"], "suggestions": held.extended([new]), "suggestionCount": 4}
        version = stored["metadata"]["resourceVersion"]
        runtime.cluster.update_status(SUGGESTION, status, version)
        written = runtime.cluster.store.find(SUGGESTION)
        assert written is not None and written["status"]["suggestions"].extends(held)
        assert held._texts._read[0] == len(held) and not held._texts._alone  # none decoded
        after = _chain(state)
    chain, count, items = after
    assert (chain, count) == (before[0], before[1] + 1)
    assert items == [*before[2], encode(new)]
    stored_list = read(state).store.find(SUGGESTION)
    assert stored_list is not None
    assert stored_list["status"]["suggestions"] == [*held, new]


def _chain(state: Path) -> tuple[int, int, list[str]]:
    """The live Suggestion's chain, its count of items, and the chain's items' texts."""
    db = sqlite3.connect(state / STATE_FILE)
    try:
        chain, count = db.execute(
            "SELECT l.chain, l.items FROM objects o JOIN log l ON l.revision = o.revision "
            "WHERE o.kind = 'Suggestion'"
        ).fetchone()
        return chain, count, pages.read(db, chain, count + 1)  # with any item stored beyond
    finally:
        db.close()


def test_a_damaged_stored_assignment_stops_the_command_and_leaves_the_volume_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An assignment's text that cannot be decoded is found when first read (here by the
    suggestion service, whose proof by the texts fails and which then decodes them): a
    ``DamagedObject`` the command reports, never taken for a damaged saved state of the
    service's, whose files stay where they are, undiscarded."""
    state = tmp_path / "state"
    _run(state, [_first(3)], undecoded=True, mp=monkeypatch)
    chain, _, texts = _chain(state)
    db = sqlite3.connect(state / STATE_FILE)
    damaged = [texts[0], texts[1][:-3] + "!!!", *texts[2:]]  # one page (``pages.py``)
    db.execute("UPDATE items SET body = ? WHERE chain = ? AND idx = 0", ("\n".join(damaged), chain))
    db.commit()
    db.close()
    files = sorted(p.name for p in state.rglob("suggestion-state*"))
    with pytest.raises(DamagedObject), session(Options(state)) as runtime:
        apply_edit(runtime, NS, NAME, {"maxTrialCount": 4})
        runtime.run_until(lambda: len(_held(runtime)) >= 4, max_steps=200)
    assert sorted(p.name for p in state.rglob("suggestion-state*")) == files
    assert not any(name.endswith(".discarded") for name in files)
