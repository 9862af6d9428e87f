"""``hyperband``: Katib's Hyperband rules, with the schedule fixed by the settings alone.

Katib's service (docs/katib-contract.md#hyperband-service) plays brackets ``s = s_max .. 0``: a
bracket's first rung is ``n = ceil((s_max + 1) * eta**s / (s + 1))`` random configurations at
resource ``r = r_l * eta**-s``; each later rung keeps the best ``ceil(previous / eta)`` of the rung
before at ``eta`` times the resource, until the bracket's last rung runs at ``r_l``. The
resource parameter (``resource_name``) is set to the rung's resource, ``str(int(...))``.

Katib's service overwrote ``n`` with the controller's request size, so a rung smaller than the
request was answered with the wrong count and the controller rejected it for ever: hyperband
never got past its first rung (#1168, #1366, docs/katib-contract.md#hyperband-service). Here the
schedule (the list of rungs, their sizes and resources) depends on the settings alone, and a call
issues at most what was asked of the current rung: a later rung's assignments are issued only once
every Trial of the rung before has a result (the call returns none meanwhile: the controller asks
again). A failed Trial ranks last. Once the last bracket's last rung is issued the search is
exhausted and the Experiment can complete.

A first rung never holds one configuration twice (the values of every parameter but the
resource, which the rung sets) while the space has one it does not hold: Katib's rung could
train the same configuration at the same resource twice in a small finite space. The ``p``-th
configuration of a first rung is its seeded draw if the rung does not hold it yet, else a draw
again (``REDRAWS``, seeded), else the first configuration the rung lacks in the space's index
order from a seeded position. A rung larger than a finite space of configurations holds each
once per round of as many as the space has (``_Rounds``), and a later rung keeps each
configuration's best before any configuration's second (``_ranked``). A continuous space is
not looked up (its draws do not meet), so its points are what they always were, and so are a
finite space's where the draw was new.

So the search's whole state is the number of assignments issued: the ``k``-th is the ``p``-th
of some rung, a seeded configuration given the rung's earlier ones (first rung) or the ``p``-th
best of the rung before (results never change once known). A saved state and one rebuilt from
the history agree.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from katib_resume.adapters.local.suggestion.results import Results
from katib_resume.adapters.local.suggestion.settings import SettingsError
from katib_resume.adapters.local.suggestion.space import Point, SearchSpace
from katib_resume.adapters.local.suggestion.unseen import REDRAWS, in_order, redrawn
from katib_resume.core.model import Experiment
from katib_resume.core.trials import parallelism

DEFAULT_ETA = 3


@dataclass(frozen=True, slots=True)
class Rung:
    start: int  # the index of its first assignment
    size: int
    resource: str
    first: bool  # a bracket's first rung (random configurations)


def schedule(r_l: Fraction, eta: int) -> tuple[Rung, ...]:
    """Every rung of every bracket, in order."""
    s_max = _s_max(r_l, eta)
    rungs: list[Rung] = []
    start = 0
    for s in range(s_max, -1, -1):
        size = math.ceil(Fraction((s_max + 1) * eta**s, s + 1))
        for i in range(s + 1):
            resource = str(max(1, int(r_l * Fraction(eta) ** (i - s))))
            rungs.append(Rung(start, size, resource, first=i == 0))
            start += size
            size = math.ceil(Fraction(size, eta))
    return tuple(rungs)


def _s_max(r_l: Fraction, eta: int) -> int:
    """``floor(log_eta(r_l))``, exactly: the largest ``s`` with ``eta**s <= r_l`` (0 below 1).

    Katib divides two float logarithms, which falls short at some exact powers (``ln 243 /
    ln 3`` is ``4.999...``: ``s_max`` 4, one bracket fewer, and a ``parallelTrialCount`` floor of
    81 where the schedule's largest rung is 243); a tolerance would err the other way just below
    a power. Integer powers cannot."""
    s = 0
    while eta ** (s + 1) <= r_l:
        s += 1
    return s


def read(experiment: Experiment, space: SearchSpace) -> tuple[Fraction, int, str]:
    """``(r_l, eta, resource_name)``, checked in Katib's order with Katib's messages."""
    given = {s.name: s.value for s in experiment.spec.algorithm.algorithm_settings}
    if not given.get("r_l") or not given.get("resource_name"):
        raise SettingsError("r_l and resource_name must be set.")
    r_l = _r_l(given["r_l"])
    eta = _eta(given.get("eta", ""))
    needed = math.ceil(eta ** _s_max(r_l, eta))
    if parallelism(experiment.spec) < needed:
        raise SettingsError(f"parallelTrialCount must be not less than {needed}.")
    if given["resource_name"] not in {p.name for p in space.parameters}:
        raise SettingsError("value of resource_name setting must be in parameters.")
    return r_l, eta, given["resource_name"]


def _r_l(text: str) -> Fraction:
    """``r_l`` as Katib reads it, ``float(v)``, kept exact (``Decimal``: ``0.1`` is a tenth).

    Katib admits 0 and then fails on ``log(0)``, and an infinity fails its arithmetic; both
    get its message here, as a text ``float`` cannot read does (``Fraction`` alone would also
    take ``1/2``)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise SettingsError("r_l must be a positive float number.")
    try:
        return Fraction(Decimal(text.strip()))
    except InvalidOperation:
        return Fraction(value)


def _eta(text: str) -> int:
    """``int(float(eta))``; none or <= 0 is 3 (Katib); 1 would divide by zero in Katib."""
    if not text:
        return DEFAULT_ETA
    try:
        eta = int(float(text))
    except (ValueError, OverflowError) as error:
        raise SettingsError(f"failed to validate eta({text}): {error}") from None
    if eta == 1:
        raise SettingsError("eta must be greater than 1 (a rung keeps 1/eta of the one before)")
    return DEFAULT_ETA if eta <= 0 else eta


class HyperbandSearch:
    name = "hyperband"

    def __init__(self, space: SearchSpace, seed: int, settings: tuple[Fraction, int, str]):
        self.space, self.seed = space, seed
        r_l, self.eta, self.resource = settings
        self.rungs = schedule(r_l, self.eta)
        self.total = sum(r.size for r in self.rungs)
        self.maximize = False
        self.names = tuple(p.name for p in space.parameters)
        self.configurations = SearchSpace(
            tuple(p for p in space.parameters if p.name != self.resource)
        )  # what a first rung varies; ``size`` None: a continuous parameter, never looked up

    def start(self) -> Any:
        return 0

    def check(self, cursor: Any) -> None:
        if type(cursor) is not int or not 0 <= cursor <= self.total:
            raise ValueError(f"not a hyperband position: {cursor!r}")

    def forget(self) -> None:
        """Nothing: the cursor is the whole search."""

    def replay(self, history: Sequence[Point]) -> tuple[Any, int | None]:
        return min(len(history), self.total), None

    def finished(self, cursor: Any, issued: Sequence[Point]) -> bool:
        return int(cursor) >= self.total

    def draw(
        self, cursor: Any, count: int, issued: Sequence[Point], results: Results
    ) -> tuple[list[Point], Any]:
        """Up to ``count`` assignments of the rungs whose predecessors have all finished."""
        points: list[Point] = []
        first = index = int(cursor)
        rounds = _Rounds(self.configurations.size, self._key)
        ranks: dict[int, list[Point] | None] = {}  # each rung before's ranking, by its start
        while len(points) < count and index < self.total:
            rung, previous = self._rung_of(index)
            if rung.first:
                point = self._configuration(index, rounds.held(rung, index, issued, first))
                rounds.add(point)
            else:
                assert previous is not None
                if previous.start not in ranks:  # once a call: a rung takes its points from it
                    ranks[previous.start] = self._ranked(previous, issued, results)
                ranked = ranks[previous.start]
                if ranked is None:
                    break  # the rung before is still running
                point = ranked[index - rung.start]
            points.append(self._with_resource(point, rung.resource))
            index += 1
        return points, index

    def _rung_of(self, index: int) -> tuple[Rung, Rung | None]:
        previous = None
        for rung in self.rungs:
            if index < rung.start + rung.size:
                return rung, previous
            previous = rung
        raise IndexError(index)

    def _ranked(self, rung: Rung, issued: Sequence[Point], results: Results) -> list[Point] | None:
        """The rung's points best first (failed last, ties by index), each configuration's best
        before any configuration's second, or ``None`` until every one of them has a result."""
        indexes = range(rung.start, rung.start + rung.size)
        if any(i not in results or i >= len(issued) for i in indexes):
            return None
        sign = -1.0 if self.maximize else 1.0

        def key(i: int) -> tuple[int, float, int]:
            value = results[i]
            return (1, 0.0, i) if value is None else (0, sign * value, i)

        seen: set[Point] = set()
        firsts: list[int] = []
        repeats: list[int] = []  # of a configuration ranked before (a rung larger than the space)
        for i in sorted(indexes, key=key):
            configuration = self._key(issued[i])
            (repeats if configuration in seen else firsts).append(i)
            seen.add(configuration)
        return [issued[i] for i in firsts + repeats]

    def _configuration(self, index: int, seen: Set[Point] | None) -> Point:
        """The ``index``-th point, of a first rung whose round holds the configurations
        ``seen`` (``None``: not looked up): its draw unless ``seen`` holds it (module
        docstring)."""
        point = self._random(index)
        if seen is None or self._key(point) not in seen:
            return point
        again = redrawn(self.seed, index, seen, self.space.sample, key=self._key, attempts=REDRAWS)
        if again is not None:
            return again
        size = self.configurations.size
        assert size is not None, "a continuous space is not looked up"
        key = in_order(self.seed, index, seen, size, self.configurations.grid_point)
        assert key is not None, "a round has a configuration left"
        return self._point_of(key)

    def _key(self, point: Point) -> Point:
        """The configuration of ``point``: its values but the resource's."""
        return tuple(pair for pair in point if pair[0] != self.resource)

    def _point_of(self, configuration: Point) -> Point:
        """``configuration`` with the resource parameter in its place (its value is the rung's,
        set by ``_with_resource``)."""
        values = dict(configuration)
        return tuple((name, values.get(name, "")) for name in self.names)

    def _random(self, index: int) -> Point:
        return self.space.sample(random.Random(f"{self.seed}/{index}"))

    def _with_resource(self, point: Point, resource: str) -> Point:
        return tuple((n, resource if n == self.resource else v) for n, v in point)


class _Rounds:
    """The configurations a first rung's current round holds, for one ``draw``: built once
    from the issued points of the round, then kept as the call adds to it. A rung's rounds are
    ``size`` points each (the configurations there are) from its start, so a round always has
    one left; ``size`` ``None`` (a continuous parameter): nothing is looked up."""

    def __init__(self, size: int | None, key: Callable[[Point], Point]) -> None:
        self.size, self.key = size, key
        self.start = -1  # the index the current round starts at
        self.seen: set[Point] = set()

    def held(
        self, rung: Rung, index: int, issued: Sequence[Point], first: int
    ) -> Set[Point] | None:
        """The configurations of the round ``index`` is in, the call having drawn from
        ``first`` on (``issued`` holds the points before ``first``)."""
        if self.size is None:
            return None
        start = index - (index - rung.start) % self.size
        if start != self.start:  # a new round, or the call's first look at this one
            self.start = start
            self.seen = {self.key(p) for p in issued[start : min(first, index)]}
        return self.seen

    def add(self, point: Point) -> None:
        if self.size is not None:
            self.seen.add(self.key(point))
