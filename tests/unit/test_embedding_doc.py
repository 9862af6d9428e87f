"""The embedding example of ``docs/architecture.md``, run as written against the fake cluster.

The block is taken from the document itself and executed once per reconcile with the names it
leaves to the embedder bound: the snapshot's parts from ``gather``, a scripted suggestion
service that gives assignments, a clock and an ``apply``. An embedder who follows the document
must get what the controller gets: a running Suggestion and Trials made from its assignments.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from katib_resume.app.loop.reconcile import apply, gather
from katib_resume.core.actions import Action
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.plan import Plan
from tests.support.harness import Bench, load, shipped_config_data

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def embedding_example() -> str:
    text = DOC.read_text()
    section = text[text.index("## Embedding the core in another scheduler") :]
    found = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert found is not None, "the embedding section has no python block"
    return found.group(1)


def run_example(code: str, bench: Bench) -> None:
    """One reconcile, the embedder's way: the document's block with its free names bound."""
    observed = gather(bench.cluster, bench.key)
    bench.clock.advance(1)

    def my_apply(actions: tuple[Action, ...]) -> None:
        apply(bench.cluster, Plan(actions))

    names: dict[str, Any] = {
        "katib_config_dict": shipped_config_data(),
        "namespace": observed.namespace,
        "name": observed.name,
        "experiment": observed.experiment,
        "suggestion": observed.suggestion,
        "trials": observed.trials,
        "deployment": observed.deployment,
        "service": observed.service,
        "pvc": observed.pvc,
        "pv": observed.pv,
        "my_service": bench,
        "my_clock": bench.clock,
        "my_apply": my_apply,
    }
    exec(compile(code, str(DOC), "exec"), names)


def test_an_embedder_who_follows_the_document_gets_trials() -> None:
    code = embedding_example()
    bench = Bench(load("from-volume-resume.yaml"))
    bench.serves_assignments = True
    for _ in range(6):
        run_example(code, bench)
    bench.bind_pvc()
    bench.set_available()
    for _ in range(6):
        run_example(code, bench)
    assert bench.conditions("Suggestion") == ["C", "DR+", "R+"]
    trials = bench.cluster.list(
        API_VERSION, "Trial", bench.key.namespace, {LABEL_EXPERIMENT: bench.key.name}
    )
    suggestion = bench.suggestion()
    assert suggestion is not None
    assigned = [entry["name"] for entry in suggestion["status"]["suggestions"]]
    assert len(trials) == len(assigned) == suggestion["spec"]["requests"] == 3
    assert sorted(trial["metadata"]["name"] for trial in trials) == sorted(assigned)
