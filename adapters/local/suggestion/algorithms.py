"""The search algorithms and Katib's ``ValidateAlgorithmSettings``.

``random`` and ``grid`` are written here; ``tpe``, ``multivariate-tpe``, ``cmaes`` and ``sobol``
are Optuna samplers (``optuna_search``), with Katib's settings (``settings``).
``hyperband`` and ``pbt`` are Katib's own rules, by hand (``hyperband``, ``pbt``).

An algorithm is written so that its whole progress is one JSON value, the *cursor*: the index of
the next point, for both algorithms. That is what makes resuming exact. ``draw(cursor, n, seen)``
returns ``n`` points and the next cursor and never mutates anything, so the server can save the
new state *before* it adopts it (a failed save leaves the old state in place), and
``replay(history)`` turns a trial history back into a cursor when the saved state is lost.

Random search draws the ``k``-th point from its own generator, seeded by the search's seed and
``k`` (one draw per parameter, in parameter order, on the parameter's distribution: ``scaled``),
so the ``k``-th point of a seed is always the same and a cursor is one integer: a saved state
does not carry a generator's 625 words, and resuming at point ``k`` costs nothing. The
``random_state`` setting, like in Katib's services, overrides the seed the server was given.
In a finite space (every parameter a list, an ``int`` or a stepped ``double``) it never issues
a point twice while one is left: a draw already issued (``seen``, the points before it) is
replaced by a seeded draw again, or after ``REDRAWS`` of them by the next point not issued in
the space's index order from a seeded position (``RandomSearch.unissued``), so the ``k``-th
point is a function of the seed, ``k`` and the points before it, whatever the batches; once
every point is issued it returns fewer points and is ``finished``, as the grid. Where the
``k``-th draw was not issued before (every draw of a space with a continuous parameter, which
is not looked up), it is the point it always was, so a history without a repeat keeps its points
and its state's digest.

Grid search draws the Cartesian product's cells in an order the seed alone fixes (a seeded
permutation of the cells' indexes, ``permutation``), as Katib's grid draws each cell at random
from those not yet drawn, so a budget smaller than the grid spreads over all of it; its cursor is
the position in that order. It skips a point already in ``seen`` (the points issued so far), so
that even a history it did not produce itself is never issued twice; when the grid is exhausted
it returns fewer points.
"""

from __future__ import annotations

import random
from collections.abc import Sequence, Set
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from katib_resume.adapters.local.suggestion import hyperband, medianstop, pbt, scaled
from katib_resume.adapters.local.suggestion import settings as katib_settings
from katib_resume.adapters.local.suggestion.hyperband import HyperbandSearch
from katib_resume.adapters.local.suggestion.permutation import LIMIT, Permutation
from katib_resume.adapters.local.suggestion.points import seen_of
from katib_resume.adapters.local.suggestion.results import Results
from katib_resume.adapters.local.suggestion.settings import SettingsError
from katib_resume.adapters.local.suggestion.space import (
    ALL_DISTRIBUTIONS,
    Point,
    SearchSpace,
    SpaceError,
    parse_space,
)
from katib_resume.adapters.local.suggestion.unseen import REDRAWS, in_order, redrawn
from katib_resume.core.model import Experiment
from katib_resume.core.observed import VALID, Outcome, Validation

if TYPE_CHECKING:  # Optuna (and NumPy through it) is imported by the searches that use it
    from katib_resume.adapters.local.suggestion.optuna_search import OptunaSearch

ALGORITHMS = ("random", "grid", *katib_settings.ALGORITHMS, "hyperband", "pbt")
"""Every algorithm this service implements."""
CMAES_DIMENSIONS = "CMA-ES only supports two or more dimensional continuous search space."


def upgraded(search: Search, cursor: Any, version: int, count: int) -> Any:
    """``cursor``, of a state of file ``version`` and ``count`` assignments, as this version's
    ``search`` keeps it: an Optuna search's results told were a dict by index text before
    version 4 and a list before version 7, and are a column of doubles (``told_column``); a
    grid walked its product in order before version 5, so its position means nothing in the
    seed's order: it starts that order again, where every cell already issued is skipped
    (``GridSearch.draw``); a CMA-ES search kept every trial's optimizer and attributes before
    version 6, and keeps a tombstone of those no ask can restore and no entry a rebuild cannot
    read (``cma_optimizers``). Every other cursor is unchanged. Raises ``ValueError`` if it is
    no cursor of that version."""
    if version < 5 and isinstance(search, GridSearch):
        search.check(cursor)
        return search.start()
    if version < 7 and search.name in katib_settings.ALGORITHMS:
        from katib_resume.adapters.local.suggestion.optuna_search import OptunaSearch

        if isinstance(search, OptunaSearch):
            return search.upgraded(cursor, count, version)
    return cursor


class Search(Protocol):
    name: str
    space: SearchSpace

    def start(self) -> Any:
        """The cursor of a search that has issued nothing."""
        ...

    def draw(
        self, cursor: Any, count: int, issued: Sequence[Point], results: Results
    ) -> tuple[list[Point], Any]:
        """Up to ``count`` new points after ``cursor`` and the ``issued`` ones, knowing
        ``results``, and the cursor after them."""
        ...

    def replay(self, history: Sequence[Point]) -> tuple[Any, int | None]:
        """The cursor after ``history``, and the index where it differs from our own sequence."""
        ...

    def check(self, cursor: Any) -> None:
        """Raise ``ValueError`` unless ``cursor`` is a cursor of this algorithm."""
        ...

    def forget(self) -> None:
        """Drop what is held in memory beyond the cursor (after a failed save)."""
        ...

    def finished(self, cursor: Any, issued: Sequence[Point]) -> bool:
        """Whether the search, at ``cursor`` after the ``issued`` points, has nothing left to
        issue (an exhausted grid or finite random space, hyperband's last rung issued): the
        Experiment can complete."""
        ...


class RandomSearch:
    name = "random"

    def __init__(self, space: SearchSpace, seed: int) -> None:
        self.space, self.seed = space, seed
        self.size = space.size  # None: a continuous parameter, never exhausted

    def start(self) -> Any:
        return 0

    def draw(
        self, cursor: Any, count: int, issued: Sequence[Point], results: Results
    ) -> tuple[list[Point], Any]:
        first = int(cursor)
        if self.size is None:  # nothing to look up (module docstring)
            return [self.point(k) for k in range(first, first + count)], first + count
        seen = seen_of(issued)
        points: list[Point] = []
        for index in range(first, first + count):
            point = self.unissued(index, seen)
            if point is None:  # every point of the space issued
                break
            seen.add(point)
            points.append(point)
        return points, first + len(points)

    def point(self, index: int) -> Point:
        """The ``index``-th draw of this seed's sequence (a string seed is hashed with SHA-512
        by ``random.Random``, so neighbouring indexes give unrelated generators)."""
        return scaled.point(self.space, random.Random(f"{self.seed}/{index}"))

    def unissued(self, index: int, seen: Set[Point]) -> Point | None:
        """The ``index``-th point of a finite space given the points issued before it
        (``seen``): the ``index``-th draw if it is not one of them; else one of ``REDRAWS``
        draws again, seeded by the index and the attempt, the first not issued; else the first
        point not issued in the space's index order (``grid_point``) from a position seeded by
        the index, wrapping round; ``None`` if there is none (the space is exhausted). Once as
        many points were issued as the space has, the draws again are skipped: the index
        order finds the space exhausted (unless some issued points are not of the space)."""
        point = self.point(index)
        if point not in seen:
            return point
        assert self.size is not None, "unissued() of a continuous space"
        if index < self.size or len(seen) < self.size:  # (a repeat counts once in len(seen))
            sample = partial(scaled.point, self.space)
            again = redrawn(self.seed, index, seen, sample, attempts=REDRAWS)
            if again is not None:
                return again
        return self._in_order(index, seen)

    def _in_order(self, index: int, seen: Set[Point]) -> Point | None:
        """The first point not in ``seen``, in index order from a position seeded by ``index``:
        at most as many looks as there are points issued in a row there, plus one."""
        assert self.size is not None
        return in_order(self.seed, index, seen, self.size, self.space.grid_point)

    def replay(self, history: Sequence[Point]) -> tuple[Any, int | None]:
        """Past the history, noting the first point that is not our own: in a finite space,
        the point ``unissued`` gives after the history's earlier points (a point the history
        repeats, as searches before this rule could, is never our own)."""
        if self.size is None:
            differ = (i for i, theirs in enumerate(history) if self.point(i) != theirs)
            return len(history), next(differ, None)
        seen: set[Point] = set()
        for index, theirs in enumerate(history):
            if theirs in seen or self.unissued(index, seen) != theirs:
                return len(history), index
            seen.add(theirs)
        return len(history), None

    def check(self, cursor: Any) -> None:
        if type(cursor) is not int or cursor < 0:
            raise ValueError(f"not a random-search position: {cursor!r}")

    def forget(self) -> None:
        """Nothing: the cursor is the whole search."""

    def finished(self, cursor: Any, issued: Sequence[Point]) -> bool:
        """Whether a finite space has no point left that ``issued`` does not hold (the cursor
        counts the assignments, so it is at least the space's size then)."""
        if self.size is None or int(cursor) < self.size:
            return False
        return self._in_order(int(cursor), seen_of(issued)) is None


class GridSearch:
    name = "grid"

    def __init__(self, space: SearchSpace, seed: int) -> None:
        self.space, self.size = space, space.grid_size or 0
        self.order = Permutation(self.size, seed)

    def point(self, position: int) -> Point:
        """The cell drawn ``position``-th: the seed's order of the product's cells."""
        return self.space.grid_point(self.order(position))

    def start(self) -> Any:
        return 0

    def draw(
        self, cursor: Any, count: int, issued: Sequence[Point], results: Results
    ) -> tuple[list[Point], Any]:
        seen = seen_of(issued)
        points: list[Point] = []
        position = int(cursor)
        while len(points) < count and position < self.size:
            point = self.point(position)
            position += 1
            if point not in seen:
                points.append(point)
        return points, position

    def replay(self, history: Sequence[Point]) -> tuple[Any, int | None]:
        """Past the history if it is our own prefix; else from the start, skipping its points."""
        ours = self.point
        differ = (i for i, point in enumerate(history) if i >= self.size or point != ours(i))
        first = next(differ, None)
        return (len(history) if first is None else 0), first

    def check(self, cursor: Any) -> None:
        if type(cursor) is not int or not 0 <= cursor <= self.size:
            raise ValueError(f"not a grid position: {cursor!r}")

    def forget(self) -> None:
        """Nothing: the cursor is the whole search."""

    def finished(self, cursor: Any, issued: Sequence[Point]) -> bool:
        return int(cursor) >= self.size


def build(experiment: Experiment, seed: int) -> Search:
    """The Experiment's search, seeded; raises ``SettingsError`` or ``SpaceError``."""
    algorithm = experiment.spec.algorithm.algorithm_name
    if algorithm not in ALGORITHMS:
        known = ", ".join(sorted(ALGORITHMS))
        raise SettingsError(f"unknown algorithm {algorithm!r}: this service implements {known}")
    if algorithm in katib_settings.ALGORITHMS:
        return _optuna(experiment, algorithm, seed)
    if algorithm == "hyperband":
        return _hyperband(experiment, seed)
    if algorithm == "pbt":
        return pbt.build(experiment, seed)
    used = seed_of(experiment, seed)  # the settings first, as Katib's services check
    space = parse_space((experiment.spec.model_extra or {}).get("parameters"))
    if algorithm == "grid":
        _check_uniform(space)
        _check_steps(space)
        return GridSearch(space, used)
    scaled.check(space)
    return RandomSearch(space, used)


def validate(experiment: Experiment) -> Validation:
    """Katib's ``ValidateAlgorithmSettings`` (and ``ValidateEarlyStoppingSettings`` when the
    Experiment has early stopping): INVALID with the reason, or VALID."""
    try:
        build(experiment, seed=0)
        if experiment.spec.early_stopping is not None:
            medianstop.read(experiment.spec.early_stopping)
    except (SettingsError, SpaceError) as error:
        return Validation(Outcome.INVALID, str(error))
    return VALID


def seed_of(experiment: Experiment, seed: int) -> int:
    """The seed the search really uses: ``random_state`` when given, else ``seed``."""
    algorithm = experiment.spec.algorithm.algorithm_name
    if algorithm not in katib_settings.RULES and algorithm not in katib_settings.GOPTUNA:
        return seed  # Katib's hyperband and PBT have no seed setting; nor has an unknown name
    state = katib_settings.read(algorithm, _given(experiment)).get("random_state")
    return seed if state is None else int(state)


def _optuna(experiment: Experiment, algorithm: str, seed: int) -> OptunaSearch:
    """An Optuna-backed search: settings first, then the space, as Katib's services check.
    Optuna is imported here, by the first such search of a process: a run of any other
    algorithm starts without it (about 0.13 s and 20 MB, NumPy's and tqdm's imports included)."""
    from katib_resume.adapters.local.suggestion.optuna_search import OptunaSearch
    from katib_resume.adapters.local.suggestion.optuna_space import distributions
    from katib_resume.adapters.local.suggestion.samplers import factory

    raw = (experiment.spec.model_extra or {}).get("parameters")
    if algorithm in katib_settings.GOPTUNA:
        _goptuna_first(algorithm, raw)
    settings = katib_settings.read(algorithm, _given(experiment))
    space = parse_space(raw, ALL_DISTRIBUTIONS)
    mapped = distributions(space)  # raises SpaceError for a distribution it cannot sample
    state = settings.get("random_state")
    used = seed if state is None else int(state)
    objective = experiment.spec.objective
    maximize = objective is not None and objective.type == "maximize"
    make = factory(algorithm, settings, used, mapped)
    return OptunaSearch(algorithm, space, used, maximize, make)


def _goptuna_first(algorithm: str, raw: Any) -> None:
    """What Katib's Goptuna service checks before it reads a setting, in its order and words:
    CMA-ES's dimensions (``int`` and ``double`` parameters), then a repeated parameter name (a
    space that is not a list of parameters is left to ``parse_space`` to describe)."""
    if not isinstance(raw, list):
        return
    items = [item for item in raw if isinstance(item, dict)]
    numeric = sum(item.get("parameterType") in ("int", "double") for item in items)
    if algorithm == "cmaes" and numeric < 2:
        raise SettingsError(CMAES_DIMENSIONS)
    names: set[Any] = set()
    for item in items:
        if item.get("name") in names:
            raise SettingsError(f"Detect duplicated parameter name: {item.get('name')}")
        names.add(item.get("name"))


def _hyperband(experiment: Experiment, seed: int) -> HyperbandSearch:
    """Katib's hyperband samples uniformly whatever the distribution, and so does ours."""
    space = parse_space((experiment.spec.model_extra or {}).get("parameters"), ALL_DISTRIBUTIONS)
    search = HyperbandSearch(space, seed, hyperband.read(experiment, space))
    objective = experiment.spec.objective
    search.maximize = objective is not None and objective.type == "maximize"
    return search


def _given(experiment: Experiment) -> dict[str, str]:
    """The settings as written; the last of a repeated name wins, as in Katib's services."""
    return {s.name: s.value for s in experiment.spec.algorithm.algorithm_settings}


def _check_uniform(space: SearchSpace) -> None:
    """A grid steps uniformly from min to max: under a ``logUniform`` (or normal) label that
    would be a search the user did not ask for, so it is refused (Katib's Optuna grid ignored
    the label), naming the algorithm that samples it."""
    for index, parameter in enumerate(space.parameters):
        scale = space.scale(index)
        if scale and not parameter.choices:
            raise SpaceError(
                f"parameter {parameter.name!r}: distribution {scale!r} is not supported by grid,"
                f" whose values step uniformly from min to max (random samples {scale})"
            )


def _check_steps(space: SearchSpace) -> None:
    """Katib's words for a grid with a continuous parameter (its parentheses held the Python
    objects' addresses; ours hold the parameters' names)."""
    names = ", ".join(parameter.name for parameter in space.parameters)
    for parameter in space.parameters:
        if parameter.count is None:
            raise SettingsError(
                f"failed to validate parameters({names}): Param {parameter.name} step is nil;"
                " For discrete search space, all parameters must include step"
            )
    if (space.grid_size or 0) > LIMIT:
        raise SettingsError(
            f"the grid has {space.grid_size} cells, more than the 2**128 this service can order"
        )
