"""PBT resumes exactly, and its population is sound at every step.

A run is a controller plan: batch sizes, and after each batch how many of the newest assignments
are still running (a result once known stays known). For any plan, seed and cut, a run stopped
at the cut and restarted (from its volume, from the trial history after the state file was
lost or damaged, or with no volume at all) hands out exactly the assignments and labels of a
run never stopped; two runs with the same seed agree. Every generation-``G`` assignment but the
first generation's has a parent of generation ``G - 1`` that had finished when it was handed
out (unless that whole generation failed: it starts afresh), and on a volume its checkpoint
directory starts as a copy of its parent's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer
from katib_resume.adapters.local.suggestion.nonfinite import admitted
from katib_resume.adapters.local.suggestion.pbt_record import GENERATION, PARENT
from katib_resume.core.model import Experiment, Manifest
from tests.property.test_suggestion_determinism import (
    DAMAGE,
    FINITE,
    MODES,
    check_sound,
    doubles,
    objective,
    seeds,
)

Steps = list[tuple[int, int]]
Scoring = Callable[[Manifest], float | None]
CHECKPOINT = "checkpoint"


@st.composite
def pbt_experiments(
    draw: st.DrawFn, kind: st.SearchStrategy[Any] | None = None, explore_only: bool = False
) -> Experiment:
    """``explore_only``: truncation threshold 0 and no resampling, so that with no Trial
    failing no child repeats its parent's values."""
    each = kind if kind is not None else st.one_of(FINITE, doubles(stepped=False))
    kinds = draw(st.lists(each, min_size=1, max_size=3))
    parameters = [{"name": f"p{i}", **kind} for i, kind in enumerate(kinds)]
    thresholds = ["0"] if explore_only else ["0", "0.2", "0.5", "1"]
    algorithm_settings = [
        {"name": "suggestion_trial_dir", "value": "/var/log/katib/checkpoints/"},
        {"name": "n_population", "value": str(draw(st.integers(5, 8)))},
        {"name": "truncation_threshold", "value": draw(st.sampled_from(thresholds))},
    ]
    if not explore_only and draw(st.booleans()):
        probability = draw(st.sampled_from(["0", "0.3", "1"]))
        algorithm_settings.append({"name": "resample_probability", "value": probability})
    spec = {
        "algorithm": {"algorithmName": "pbt", "algorithmSettings": algorithm_settings},
        "objective": {
            "type": draw(st.sampled_from(["minimize", "maximize"])),
            "objectiveMetricName": "m",
        },
        "parameters": parameters,
    }
    return Experiment.model_validate({"metadata": {"name": "exp", "namespace": "ns"}, "spec": spec})


steps = st.lists(st.tuples(st.integers(1, 6), st.integers(0, 3)), min_size=2, max_size=10)


class Controller:
    """Asks in batches and records results; checks every assignment as it is handed out."""

    def __init__(
        self, subject: Experiment, volume: Path | None, score: Scoring = objective
    ) -> None:
        self.volume, self.score = volume, score
        given = {s.name: s.value for s in subject.spec.algorithm.algorithm_settings}
        self.size = int(given["n_population"])
        self.held: list[Manifest] = []
        self.known: dict[str, float | None] = {}

    def follow(self, server: SuggestionServer, plan: Steps) -> list[Manifest]:
        for size, running in plan:
            for item in self.held[: max(0, len(self.held) - running)]:
                self.finish(item)
            batch = server.get_suggestions(self.held, len(self.held) + size, dict(self.known))
            assert len(batch) == size
            for item in batch:
                self.check(item)
            self.held += batch
        return self.held

    def finish(self, item: Manifest) -> None:
        if item["name"] in self.known:
            return
        self.known[item["name"]] = self.score(item)
        if self.volume is not None:  # the Trial saves its checkpoint
            (self.volume / item["name"] / CHECKPOINT).write_text(item["name"])

    def failed(self, item: Manifest) -> bool:
        """Whether it finished without a value the search takes (failed, NaN), or runs."""
        return admitted(self.known.get(item["name"])) is None

    def check(self, item: Manifest) -> None:
        labels = item["labels"]
        generation = int(labels[GENERATION])
        by_name = {a["name"]: a for a in self.held}
        if self.held:
            assert generation >= int(self.held[-1]["labels"][GENERATION])
        if PARENT not in labels:  # the first generation, or one whose whole pool failed
            earlier = [a for a in self.held if int(a["labels"][GENERATION]) == generation - 1]
            assert all(self.failed(a) for a in earlier[: self.size])
        else:
            parent = by_name[labels[PARENT]]
            assert int(parent["labels"][GENERATION]) == generation - 1
            assert parent["name"] in self.known and not self.failed(parent)  # with a value
        if self.volume is not None:
            files = [p.name for p in (self.volume / item["name"]).iterdir()]
            if PARENT in labels:
                saved = (self.volume / item["name"] / CHECKPOINT).read_text()
                assert saved == labels[PARENT]
            else:
                assert files == []


def straight(subject: Experiment, seed: int, plan: Steps, volume: Path | None) -> list[Manifest]:
    server = SuggestionServer(subject, seed, volume)
    server.start([])
    return Controller(subject, volume).follow(server, plan)


@settings(deadline=None, max_examples=40)
@given(subject=pbt_experiments(), seed=seeds, plan=steps)
def test_the_same_seed_gives_the_same_population(
    subject: Experiment, seed: int, plan: Steps
) -> None:
    with TemporaryDirectory() as directory:
        on_volume = straight(subject, seed, plan, Path(directory))
    assert straight(subject, seed, plan, None) == on_volume
    check_sound(subject, on_volume)


@settings(deadline=None, max_examples=60)
@given(
    subject=pbt_experiments(),
    seed=seeds,
    plan=steps,
    mode=st.just("kept") | st.sampled_from(MODES),
    data=st.data(),
)
def test_a_resumed_population_continues_exactly(
    *, subject: Experiment, seed: int, plan: Steps, mode: str, data: st.DataObject
) -> None:
    cut = data.draw(st.integers(1, len(plan) - 1), label="cut")
    expected = straight(subject, seed, plan, None)
    with TemporaryDirectory() as directory:
        volume = None if mode == "no volume" else Path(directory)
        controller = Controller(subject, volume)
        server = SuggestionServer(subject, seed, volume)
        server.start([])
        history = controller.follow(server, plan[:cut])
        server.stop()
        if mode in DAMAGE and (Path(directory) / FILE_NAME).exists():
            DAMAGE[mode](Path(directory) / FILE_NAME, data)
        restarted = SuggestionServer(subject, seed, volume)
        report = restarted.start(history)
        resumed = controller.follow(restarted, plan[cut:])
    assert report.source == ("restored" if mode == "kept" else "rebuilt"), report.reason
    assert resumed == expected
    check_sound(subject, resumed)


WIDE = st.tuples(st.decimals("0.01", "1", places=2), st.decimals("50", "100", places=2)).map(
    lambda bounds: {
        "parameterType": "double",
        "feasibleSpace": {"min": str(bounds[0]), "max": str(bounds[1])},
    }
)
"""Doubles whose values a perturbation (x 0.8, x 1.2) seldom pushes past a bound."""


def smooth(item: Manifest) -> float:
    """``objective`` without its failures (a failed Trial's child copies a source's values)."""
    return sum((float(v["value"]) - 0.3) ** 2 for v in item["parameterAssignments"])


def repeated(history: list[Manifest]) -> bool:
    """Whether two assignments have the same values (exploring children of different parents
    clamped alike at a bound), which no replay can tell apart."""
    points = [tuple(v["value"] for v in a["parameterAssignments"]) for a in history]
    return len(set(points)) < len(points)


@settings(deadline=None, max_examples=60)
@given(
    subject=pbt_experiments(WIDE, explore_only=True),
    seed=seeds,
    plan=st.lists(st.tuples(st.integers(3, 6), st.integers(0, 2)), min_size=6, max_size=12),
    volume=st.booleans(),
    data=st.data(),
)
def test_a_population_rebuilt_from_trials_without_labels_continues_exactly(
    *, subject: Experiment, seed: int, plan: Steps, volume: bool, data: st.DataObject
) -> None:
    """Over gRPC a lost state is rebuilt from Trials that carry no labels (Katib's controller
    sends the Trial's ``spec.labels``, which nothing fills): the lineage is found again by
    replaying the search over the assignments and their results (``pbt_walk``). For that the
    values must tell the members apart: no two assignments alike (no exploit, no failed Trial,
    and no two children clamped alike at a bound: ``repeated``). Where they cannot, the test
    below holds the rebuilt population to being sound. (Cut late: past the first
    generation, where the labels are needed.)"""
    cut = data.draw(st.integers(len(plan) // 2, len(plan) - 1), label="cut")
    server = SuggestionServer(subject, seed, None)
    server.start([])
    expected = Controller(subject, None, smooth).follow(server, plan)
    assume(not repeated(expected))
    with TemporaryDirectory() as directory:
        where = Path(directory) if volume else None
        controller = Controller(subject, where, smooth)
        server = SuggestionServer(subject, seed, where)
        server.start([])
        history = controller.follow(server, plan[:cut])
        if where is not None:
            (where / FILE_NAME).unlink()
        restarted = SuggestionServer(subject, seed, where)
        restarted.start([{k: v for k, v in item.items() if k != "labels"} for item in history])
        resumed = controller.follow(restarted, plan[cut:])
    assert resumed == expected


@settings(deadline=None, max_examples=30)
@given(subject=pbt_experiments(), seed=seeds, plan=steps, data=st.data())
def test_a_population_rebuilt_without_labels_is_sound_on_any_space(
    *, subject: Experiment, seed: int, plan: Steps, data: st.DataObject
) -> None:
    """Where values cannot tell the lineage (a few points, members alike), the rebuilt
    population is still a population: every member's parent finished in the generation before."""
    cut = data.draw(st.integers(1, len(plan) - 1), label="cut")
    controller = Controller(subject, None)
    server = SuggestionServer(subject, seed, None)
    server.start([])
    history = controller.follow(server, plan[:cut])
    restarted = SuggestionServer(subject, seed, None)
    restarted.start([{k: v for k, v in item.items() if k != "labels"} for item in history])
    fresh = Controller(subject, None)
    fresh.known = dict(controller.known)
    known = dict(controller.known)  # every request carries every Trial's result
    fresh.held = restarted.get_suggestions([], len(history), known)  # labelled as it sees them
    resumed = fresh.follow(restarted, plan[cut:])
    check_sound(subject, resumed)
