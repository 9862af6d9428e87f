"""``pbt``: Population Based Training, Katib's rules (``pbt_rules``) as a resumable search.

Generations. Generation 0 is random points (the ``j``-th is random search's ``j``-th point).
Generation ``G + 1`` is bred (``pbt_rules.breed``) from the *pool* of generation ``G``: its first
``n_population`` members in issue order, once every one of them has a result. Until then a
request is answered with more members of generation ``G`` (more random points, or children bred
again from ``G``'s own pool), so a reply always holds as many assignments as were asked for, as
Katib's controller requires; Katib's service did the same with its "previous" pool. The ``j``-th
member of a generation is child ``j % n`` of breeding round ``j // n``, each round from its own
generator seeded by ``(seed, G, round)``: a member depends on the seed and the pool alone.

The cursor is the population's record (``pbt_record``): where each generation starts, each
assignment's parent, and the values each generation was bred from. The server saves it with the
assignments after every reply; rebuilt from a trial history, it is read back from the labels,
or, from a history without labels (over gRPC), found again by replaying the search
(``pbt_walk``).

Labels, as Katib's: ``pbt.suggestion.katib.kubeflow.org/generation`` on every assignment and
``.../parent`` (the parent's Trial name) when it has a parent; the controller copies them onto the
Trial. The Trial's checkpoint directory is prepared when the assignment is handed out
(``pbt_volume``). PBT never runs out: the Experiment ends by ``maxTrialCount`` or its goal.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from katib_resume.adapters.local.suggestion import pbt_record, pbt_settings, pbt_volume, pbt_walk
from katib_resume.adapters.local.suggestion.assignments import point_of
from katib_resume.adapters.local.suggestion.nonfinite import Stored, admitted, stored, value_of
from katib_resume.adapters.local.suggestion.pbt_record import GENERATION, PARENT, Lineage
from katib_resume.adapters.local.suggestion.pbt_rules import Child, Member, breed
from katib_resume.adapters.local.suggestion.pbt_settings import PbtSettings
from katib_resume.adapters.local.suggestion.results import Results
from katib_resume.adapters.local.suggestion.space import (
    ALL_DISTRIBUTIONS,
    Point,
    SearchSpace,
    parse_space,
)
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment


def build(experiment: Experiment, seed: int) -> PbtSearch:
    """The settings first, then the space (sampled uniformly whatever the distribution, as
    Katib's service); raises ``SettingsError`` or ``SpaceError``."""
    given = {s.name: s.value for s in experiment.spec.algorithm.algorithm_settings}
    settings = pbt_settings.read(given)
    space = parse_space((experiment.spec.model_extra or {}).get("parameters"), ALL_DISTRIBUTIONS)
    objective = experiment.spec.objective
    maximize = objective is not None and objective.type == "maximize"
    return PbtSearch(space, seed, settings, maximize)


class PbtSearch:
    name = "pbt"

    def __init__(
        self, space: SearchSpace, seed: int, settings: PbtSettings, maximize: bool
    ) -> None:
        self.space, self.seed, self.settings = space, seed, settings
        self.size, self.sign = settings.population, 1.0 if maximize else -1.0
        self._plans: dict[tuple[Any, ...], list[Child]] = {}

    def start(self) -> Any:
        return pbt_record.start()

    def check(self, cursor: Any) -> None:
        if not pbt_record.sound(cursor, self.size):
            raise ValueError("not a PBT population record")

    def forget(self) -> None:
        self._plans.clear()

    def finished(self, cursor: Any, issued: Sequence[Point]) -> bool:
        return False

    def replay(self, history: Sequence[Point]) -> tuple[Any, int | None]:
        """The lineage is read from the labels (``relabel``); the pools come with the next
        call's results."""
        return {"replayed": len(history)}, None

    def relabel(self, cursor: Any, history: Sequence[Manifest]) -> Any:
        return {**cursor, "labels": pbt_record.labels_of(history)}

    def draw(
        self, cursor: Any, count: int, issued: Sequence[Point], results: Results
    ) -> tuple[list[Point], Any]:
        """``count`` members: of the next generation if its pool is complete, else more of the
        current one."""
        starts, parents, pools = self.lineage(cursor, issued, results)
        if self._ready(starts, len(issued), results):
            pools.append(self._pool_values(starts[-1], results))
            starts.append(len(issued))
        points = []
        for k in range(len(issued), len(issued) + count):
            child = self._member(k - starts[-1], starts, pools, issued)
            points.append(child.point)
            parents.append(-1 if child.parent is None else child.parent)
        return points, {"starts": starts, "parents": parents, "pools": pools}

    def annotate(
        self,
        cursor: Any,
        issued: Sequence[Manifest],
        first: int,
        items: Sequence[Manifest],
        *,
        results: Mapping[str, float | None],
        data_dir: Path | None,
    ) -> list[Manifest]:
        """Katib's labels, after the checkpoint directories are ready (``annotate.Annotating``)."""
        if pbt_record.complete(cursor, len(issued)):  # the usual case: no walk over the history
            starts, parents = cursor["starts"], cursor["parents"]
        else:
            names = [str(m.get("name", "")) for m in issued]
            known = {i: admitted(results[n]) for i, n in enumerate(names) if n in results}
            starts, parents, _ = self.lineage(cursor, list(map(point_of, issued)), known)
        completed = []
        for index, item in enumerate(items, start=first):
            labels = {GENERATION: str(bisect.bisect_right(starts, index) - 1)}
            if parents[index] >= 0:
                labels[PARENT] = str(issued[parents[index]]["name"])
            if data_dir is not None:
                pbt_volume.prepare(data_dir, str(item["name"]), labels.get(PARENT))
            completed.append({**item, "labels": labels})
        return completed

    def lineage(self, cursor: Any, issued: Sequence[Point], results: Results) -> Lineage:
        """A copy of the cursor's record, or the record its labels give (``pbt_record``), or,
        when the history has no labels at all (over gRPC), the record a replay finds
        (``pbt_walk``)."""
        if pbt_record.complete(cursor, len(issued)):
            return pbt_record.copy(cursor)
        labels = list(cursor.get("labels") or [])[: len(issued)]
        labels += [[-1, -1]] * (len(issued) - len(labels))  # unlabelled: the generation before
        if issued and all(generation < 0 for generation, _ in labels):
            found = pbt_walk.walk(self, issued, results)
            if found is not None:
                return found
        return pbt_record.from_labels(
            labels, self.size, lambda first: self._pool_values(first, results)
        )

    def _ready(self, starts: Sequence[int], issued: int, results: Results) -> bool:
        """Whether the current generation's pool is issued and has every result."""
        first = starts[-1]
        pool = range(first, first + self.size)
        return first + self.size <= issued and all(i in results for i in pool)

    def _pool_values(self, first: int, results: Results) -> list[Stored]:
        """The pool's values, scaled so that bigger is better (``None``: failed, or unknown),
        as the record keeps them (``nonfinite.stored``: ±inf is a value, kept as text)."""
        values: list[Stored] = []
        for i in range(first, first + self.size):
            value = results.get(i)
            values.append(None if value is None else stored(self.sign * value))
        return values

    def _member(
        self,
        j: int,
        starts: Sequence[int],
        pools: Sequence[Sequence[Stored]],
        issued: Sequence[Point],
    ) -> Child:
        """Member ``j`` of the newest generation in ``starts``."""
        generation = len(starts) - 1
        if generation == 0:
            return Child(self.space.sample(random.Random(f"{self.seed}/{j}")), None)
        first, values = starts[-2], pools[-1]
        pool = tuple(
            Member(first + i, issued[first + i], value_of(values[i])) for i in range(self.size)
        )
        return self._plan(generation, j // self.size, pool)[j % self.size]

    def _plan(self, generation: int, round_: int, pool: tuple[Member, ...]) -> list[Child]:
        key = (generation, round_, pool)
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) > 16:
                self._plans.clear()
            rng = random.Random(f"{self.seed}/pbt/{generation}/{round_}")
            threshold, resample = self.settings.threshold, self.settings.resample
            plan = self._plans[key] = breed(pool, self.space, threshold, resample, rng)
        return plan
