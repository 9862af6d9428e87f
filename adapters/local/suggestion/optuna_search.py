"""A search driven by an Optuna sampler (``tpe``, ``multivariate-tpe``, ``cmaes``, ``sobol``).

Theory of operation. The search keeps a live in-memory Optuna study whose trials are the
assignments issued so far, in order. A call tells the study only the results it has not been
told (the controller sends every Trial every time: each result is told once), then asks for the
new assignments, each with its own seeded sampler (``samplers.ask_seed``).

The cursor, the JSON value the server saves, holds what the assignments themselves do not: the
results told so far (``told``: a column of doubles by assignment index, ``told_column``; a
list before state format 7 and a dict by index text before format 4, upgraded when read:
``upgraded``) and the system attributes samplers keep in the study (``attrs``: CMA-ES's
optimizer and generations, the Sobol sequence's position). The study is a function of the
issued assignments and the cursor, so after a restart it is rebuilt from them in one pass
(``Live.load``; no sampler runs), of the trials its sampler reads (``sampler_reads``), and
asks exactly what the uninterrupted study would have asked. Results come in through ``draw``,
just before the asks they inform; told results change only what later asks see.

Rebuilt from the trial history alone (the saved state lost), the attributes are unknown: the
Sobol position is recomputed (every assignment but the first advanced it by one: not so one
asked when every Trial before it had failed, which Optuna draws at random, and the history does
not say when a Trial failed); CMA-ES starts a new evolution from the results it is told, since
its past generations cannot be recovered.

The items of one batch are never identical, nor, while a finite space has points left, equal
to an earlier assignment (Katib's services repeated themselves, #1329, #1039): a repeated point
is replaced by a seeded random one not yet issued, written into the study as the trial's params.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Mapping, Sequence, Set
from itertools import repeat
from operator import is_
from typing import Any, cast

import optuna

from katib_resume.adapters import heap
from katib_resume.adapters.local.suggestion import columns, cursor_delta, told_column
from katib_resume.adapters.local.suggestion.cma_optimizers import (
    Pickled,
    carries,
    pruned,
    tombstone,
)
from katib_resume.adapters.local.suggestion.cma_trials import CmaTrials, generation_of
from katib_resume.adapters.local.suggestion.column import Column
from katib_resume.adapters.local.suggestion.cursor_delta import same
from katib_resume.adapters.local.suggestion.live_study import Live
from katib_resume.adapters.local.suggestion.nonfinite import stored
from katib_resume.adapters.local.suggestion.optuna_space import distributions, reader, render
from katib_resume.adapters.local.suggestion.points import seen_of
from katib_resume.adapters.local.suggestion.results import Results
from katib_resume.adapters.local.suggestion.sampler_reads import READS, Past, cma_keys
from katib_resume.adapters.local.suggestion.samplers import Delegate, SamplerFactory, ask_seed
from katib_resume.adapters.local.suggestion.space import Point, SearchSpace
from katib_resume.adapters.local.suggestion.told_column import numbers_of
from katib_resume.adapters.local.suggestion.trial_numbers import Numbers

optuna.logging.set_verbosity(optuna.logging.WARNING)
MAX_REDRAWS = 100


class OptunaSearch:
    def __init__(
        self, name: str, space: SearchSpace, seed: int, maximize: bool, make: SamplerFactory
    ) -> None:
        self.name, self.space, self.seed, self.maximize = name, space, seed, maximize
        self.make, self.distributions = make, distributions(space)
        self._readers = [
            (p.name, reader(p, space.scale(i))) for i, p in enumerate(space.parameters)
        ]
        self._live: Live | None = None

    def start(self) -> Any:
        return {"told": Column(), "trial_attrs": {}, "study_attrs": {}, "unknown": 0}

    def check(self, cursor: Any) -> None:
        keys = {"told", "trial_attrs", "study_attrs", "unknown"}
        if not isinstance(cursor, dict) or set(cursor) != keys:
            raise ValueError(f"not an {self.name} search position")
        told, unknown = cursor["told"], cursor["unknown"]
        if not isinstance(told, Column) or not told_column.sound(told):
            raise ValueError(f"not an {self.name} search position")
        if type(unknown) is not int or unknown < 0:
            raise ValueError(f"not an {self.name} search position")
        attrs = cursor["trial_attrs"]  # by assignment index text (few: ``cma_optimizers``)
        if not isinstance(attrs, dict) or not all(map(str.isdigit, attrs)):
            raise ValueError(f"not an {self.name} search position")
        if not all(isinstance(entry, dict) for entry in attrs.values()):
            raise ValueError(f"not an {self.name} search position")

    def upgraded(self, cursor: Any, count: int, version: int) -> Any:
        """The cursor of a state of format ``version`` (6 or earlier), of ``count``
        assignments, as this format keeps it: ``told`` a ``Column`` since format 7 (a list
        before, ``told_column.column_of``; a dict by index text before format 4,
        ``told_column.from_version_3``), and for CMA-ES since format 6 no optimizer that no
        ask can restore nor entry that no rebuild can read (``cma_optimizers.pruned``). Raises
        ``ValueError`` if it is no such cursor."""
        if not isinstance(cursor, dict) or "told" not in cursor:
            raise ValueError(f"not an {self.name} search position")
        told = cursor["told"]
        if version < 4:
            told = told_column.from_version_3(told, count)
        cursor = {**cursor, "told": told_column.column_of(told)}
        if version < 6 and self.name == "cmaes" and isinstance(cursor.get("trial_attrs"), dict):
            self.check(cursor)  # (a column of sound entries, read by ``pruned``)
            attrs = pruned(cursor["trial_attrs"], cursor["told"], cma_keys())
            cursor = cursor if attrs is cursor["trial_attrs"] else {**cursor, "trial_attrs": attrs}
        return cursor

    def replay(self, history: Sequence[Point]) -> tuple[Any, int | None]:
        """From the history alone: nothing told yet, the sampler attributes unknown."""
        return {**self.start(), "unknown": len(history)}, None

    def draw(
        self, cursor: Any, count: int, issued: Sequence[Point], results: Results
    ) -> tuple[list[Point], Any]:
        live = self._study(cursor, issued)
        fresh = self._tell(live, results)
        told = told_column.told_with(cursor["told"], fresh) if fresh else cursor["told"]
        points: list[Point] = []
        new: dict[str, dict[str, Any]] = {}  # the attributes of the trials asked, by index
        for index in range(len(issued), len(issued) + count):
            point, number = self._ask(live, index, live.seen)
            live.seen.add(point)
            points.append(point)
            live.numbers.append(number)
            live.untold.add(index)
            attrs = live.storage.get_trial_system_attrs(live.trial_id(number))
            if attrs:
                new[str(index)] = attrs
                if live.pickled is not None and carries(attrs, cma_keys()[1]):
                    live.pickled.add(index, number, generation_of(attrs, cma_keys()[0]))
        trial_attrs = self._attrs(live, cursor["trial_attrs"], new)
        study_attrs = live.storage.get_study_system_attrs(live.study_id)
        if same(study_attrs, cursor["study_attrs"]):  # unchanged: the save need not compare it
            study_attrs = cursor["study_attrs"]
        after = {**cursor, "told": told, "trial_attrs": trial_attrs, "study_attrs": study_attrs}
        live.cursor = after
        return points, after

    def _attrs(
        self, live: Live, before: dict[str, Any], new: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """The cursor's trial attributes after a draw whose asks made the trials' attributes
        ``new`` (by index text): ``before`` itself if there are none; for CMA-ES, the
        optimizers no ask can restore any more tombstoned, and the entries no rebuild can read
        dropped (``cma_optimizers``). A copy whose entries were set is noted for the save's
        record (``cursor_delta.noted``); one with entries dropped is written whole, and small."""
        dead: list[str] = []
        start = None
        if live.pickled is not None and live.cma is not None:
            dead = [str(index) for index in live.pickled.dead(live.cma.carrier)]
            start = live.pickled.start(live.cma.floor)
        after = before
        if new or dead:
            after = {**before, **new}
            for key in dead:
                after[key] = tombstone(before[key], cma_keys()[1])
            cursor_delta.noted(before, after, [*new, *dead])
        if live.pickled is not None and start is not None and start > live.pickled.first:
            after = {index: attrs for index, attrs in after.items() if int(index) >= start}
            live.pickled.first = start
        return after

    def forget(self) -> None:
        """Drop the live study (its asks were not saved): the next draw rebuilds it."""
        self._live = None

    def finished(self, cursor: Any, issued: Sequence[Point]) -> bool:
        """Never: a sampler can always ask again (on a used-up finite space, a repeat)."""
        return False

    def _study(self, cursor: Any, issued: Sequence[Point]) -> Live:
        """The live study if it stands at ``cursor``, else one rebuilt from the assignments."""
        live = self._live
        if live is not None and live.cursor is cursor and len(live.numbers) == len(issued):
            return live
        self._live = live = self._rebuild(cursor, issued)
        return live

    def _rebuild(self, cursor: Any, issued: Sequence[Point]) -> Live:
        """The study of the issued assignments and the cursor, built in one pass
        (``Live.load``: no validation, no copies, no sampler runs) of the trials its sampler
        reads (``sampler_reads.READS``), their values read a parameter at a time
        (``columns``). Only the replayed assignments (the first ``unknown``) are all read: the
        later ones were asked of this space, so each is a trial; should one not read as a
        point of it, every assignment is read."""
        trusted = min(cursor["unknown"], len(issued))
        with heap.paused():
            live = self._built(cursor, issued, trusted) or self._built(cursor, issued, len(issued))
        assert live is not None, "with every assignment read, the trials' params are known"
        live.seen = seen_of(issued)
        for key, value in cursor["study_attrs"].items():
            live.storage.set_study_system_attr(live.study_id, key, value)
        if cursor["unknown"] and not cursor["study_attrs"] and self.name == "sobol":
            self._advance_sobol(live, len(issued) - live.numbers.count(None))
        live.cursor = cursor
        return live

    def _built(self, cursor: Any, issued: Sequence[Point], read: int) -> Live | None:
        """The study's trials, the first ``read`` assignments read to find which of them are
        points of the space (the others are not trials); ``None`` if a later one is not."""
        first = self._params_of(issued[:read])
        known = [p for p in first if p is not None]
        kept: list[int] | range = range(len(issued))
        if len(known) < len(first):
            kept = [i for i, p in enumerate(first) if p is not None] + list(kept[read:])
        results = told_column.results_of(cursor["told"], kept, len(issued))
        untold = told_column.untold_of(kept, results)
        attrs = cursor["trial_attrs"]
        best = told_column.best(results, self.maximize)
        attributed = range(len(kept) if attrs else 0)
        running = untold if isinstance(kept, range) else None  # numbers are indexes
        past = Past(results, lambda n: attrs.get(str(kept[n]), {}), attributed, best, running)
        built = READS[self.name](past)
        built = range(len(kept)) if built is None else built
        params = self._params_for(issued, kept, known, built)
        if params is None:
            return None
        live = Live(self.maximize, self.distributions, Delegate())
        if self.name == "cmaes":
            live.cma = CmaTrials(*cma_keys())
            live.pickled = Pickled.found(
                past.attrs,
                results,
                attributed,
                kept.__getitem__,
                keys=cma_keys(),
                first=min(map(int, attrs), default=0),
            )
        every = len(kept) == len(issued)  # each assignment a trial: its number its index
        live.numbers = Numbers(len(kept)) if every else Numbers(0, numbers_of(kept, len(issued)))
        live.untold = untold
        live.load(
            results,
            built,
            params,
            list(map(attrs.get, map(str, map(kept.__getitem__, built)), iter(dict, None))),
            best,
            complete=told_column.complete_of(results, len(untold)),
        )
        return live

    def _params_for(
        self,
        issued: Sequence[Point],
        kept: Sequence[int],
        known: list[dict[str, Any]],
        built: Sequence[int],
    ) -> list[dict[str, Any]] | None:
        """The params of the ``built`` trials (in order): of the first ones, ``known``; the
        others read now. ``None`` if one of those is not a point of the space."""
        split = bisect_left(built, len(known))
        rest = built[split:]
        if isinstance(kept, range) and isinstance(rest, range):  # the later ones, all of them
            later = list(issued[rest.start : rest.stop])
        else:
            later = list(map(issued.__getitem__, map(kept.__getitem__, rest)))
        found = list(map(known.__getitem__, built[:split])) + self._params_of(later)
        if any(map(is_, found, repeat(None))):
            return None
        return cast(list[dict[str, Any]], found)

    def _params_of(self, points: Sequence[Point]) -> list[dict[str, Any] | None]:
        """The Optuna params of ``points`` (``None``: not a point of the space), read a
        parameter at a time where they all name the space's parameters in order."""
        params = columns.params_of(self.space, points)
        return list(map(self._params, points)) if params is None else params

    def _advance_sobol(self, live: Live, trials: int) -> None:
        """Put the Sobol sequence where ``trials`` asks left it: Optuna draws the first point
        at random and every later one advances the sequence by one."""
        if trials < 2:
            return
        sampler = self.make(0)
        sampler._find_sample_id(live.study, self.distributions)  # type: ignore[attr-defined]
        for key in live.storage.get_study_system_attrs(live.study_id):
            if key.startswith("qmc:"):
                live.storage.set_study_system_attr(live.study_id, key, trials - 2)

    def _tell(self, live: Live, results: Results) -> dict[int, Any]:
        """Tell the study the results it has not been told, in the order of their assignments;
        what was told, by index. Katib sends every result in every call, but only the trials
        not told yet (``live.untold``: few, the running ones) can take one, so only they are
        looked up (``Known`` answers a lookup without mapping every result). The order of the
        results in the call is not read: walking them maps every result (0.7 ms a call at
        5,000), and no sampler here reads the order in which one call's results were told
        (the study's best trial, the only thing it decides among equal values, is read by
        none; a rebuild takes the first by number, as this order does)."""
        fresh = sorted(index for index in live.untold if index in results)
        new: dict[int, Any] = {}
        for index in fresh:
            number = live.numbers[index]
            assert number is not None, "an untold assignment is a trial"
            value = results[index]
            live.tell(number, value)
            live.untold.discard(index)
            new[index] = stored(float(value) if type(value) is bool else value)
        return new

    def _ask(self, live: Live, index: int, seen: Set[Point]) -> tuple[Point, int]:
        assert isinstance(live.study.sampler, Delegate)
        live.study.sampler.current = live.fit(self.make(ask_seed(self.seed, index)))
        trial = live.study.ask(self.distributions)
        point = self._point(trial.params)
        other = self._redraw(index, seen) if point in seen and not self._exhausted(seen) else None
        if other is not None:
            point, params = other, self._params(other)
            assert params is not None, "a point drawn from the space is in it"
            for name, value in params.items():
                dist = self.distributions[name]
                live.storage.set_trial_param(
                    live.trial_id(trial.number), name, dist.to_internal_repr(value), dist
                )
        return point, trial.number

    def _exhausted(self, seen: Set[Point]) -> bool:
        size = self.space.size
        return size is not None and len(seen) >= size

    def _redraw(self, index: int, seen: Set[Point]) -> Point | None:
        """A seeded random point not in ``seen``, else (a space nearly used up) the first
        grid point not in it, else ``None``."""
        for attempt in range(MAX_REDRAWS):
            point = self.space.sample(random.Random(f"{self.seed}/{index}/redraw/{attempt}"))
            if point not in seen:
                return point
        size = self.space.grid_size or 0
        return next((p for i in range(size) if (p := self.space.grid_point(i)) not in seen), None)

    def _point(self, params: Mapping[str, Any]) -> Point:
        space = self.space
        return tuple(
            (p.name, render(p, space.scale(i), params[p.name]))
            for i, p in enumerate(space.parameters)
        )

    def _params(self, point: Point) -> dict[str, Any] | None:
        """The Optuna params of an assignment, or ``None`` if it is not a point of the space."""
        values = dict(point)
        params: dict[str, Any] = {}
        for name, read in self._readers:
            text = values.get(name)
            value = None if text is None else read(text)
            if value is None:
                return None
            params[name] = value
        return params
