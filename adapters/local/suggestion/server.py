"""The suggestion service, in process: Katib's ``GetSuggestions`` with resumable state.

Theory of operation. The server's answer is a pure function of the Experiment, the seed and the
assignments issued so far, and the state it keeps (``SearchState``) is exactly what it needs to
continue that function. So there are three ways to stand at assignment ``n``, which must agree:

- **restored**: the state file on the volume is read back (``state.py``);
- **rebuilt**: the file is missing or cannot be trusted, so the trial history the controller
  holds (the Suggestion's ``status.suggestions``) is replayed through the algorithm;
- **uninterrupted**: the server never stopped.

A restored state is used only if the history is a prefix of it: it may be *ahead* of the history
(a response was lost, or the controller crashed before recording it) but never behind or
different, since the controller's list is what Trials were made from.

``get_suggestions(have, total)`` returns the assignments ``len(have) .. total - 1``. Those the
server already issued are served again, unchanged, before any new one is generated: a lost
response is re-delivered, never skipped nor repeated. If ``have`` is not a prefix of what the
server issued, the server re-synchronises on ``have`` as it would on start (level-based: the
controller's list wins). A batch that changes the state is saved before it is returned, so
nothing is handed out that the volume does not remember; if the save fails, or the draw itself
(a result the search cannot take), the server keeps its previous state and the next call
produces the same batch again.

A new search (no saved state, no history) is not saved at start: its state is what a rebuild
from the empty history gives, so a file holding it would add nothing but an atomic save (a new
file, two ``fsync``s and a rename). The first ``get_suggestions`` call saves it, changed or not,
so after any call the volume holds the state the answer came from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from katib_resume.adapters.local.suggestion import state as store
from katib_resume.adapters.local.suggestion.algorithms import (
    Search,
    build,
    seed_of,
    upgraded,
    validate,
)
from katib_resume.adapters.local.suggestion.annotate import Annotating
from katib_resume.adapters.local.suggestion.assignments import (
    Index,
    assignment,
    name_for,
    normalized,
    point_of,
)
from katib_resume.adapters.local.suggestion.prefix import Prefixes, holds
from katib_resume.adapters.local.suggestion.settings import SettingsError
from katib_resume.adapters.local.suggestion.space import SpaceError
from katib_resume.adapters.local.suggestion.state import SearchState, StateProblem
from katib_resume.adapters.local.suggestion.state_store import StateStore
from katib_resume.core.history import Unreadable
from katib_resume.core.model import Experiment, Manifest
from katib_resume.core.observed import Validation

Order = Callable[[Sequence[Manifest]], Sequence[Manifest]]
"""A history in issue order, as well as it can be guessed (``start``'s ``guess_order``)."""
EXHAUSTED = "the search is exhausted: it has issued every assignment it has ({count})"


@dataclass(frozen=True, slots=True)
class _Found:
    """What start found on the volume: a resumable state, or why not (``trouble`` if wrong)."""

    state: SearchState | None
    why: str
    trouble: bool = False
    kept: str = ""
    history: Sequence[Manifest] = ()
    """The history ``state`` was found to start with (in the saved order, if it had none)."""


@dataclass(frozen=True, slots=True)
class StartReport:
    """Where the server's state came from, and why, in words for the user."""

    source: Literal["new", "restored", "rebuilt"]
    reason: str


class SuggestionServer:
    """One Experiment's suggestion service; ``data_dir`` is its volume (``None``: no volume).

    ``seed`` must be stable across restarts (e.g. derived from the Experiment's UID): it is part
    of the saved state's identity, and a different seed means a different sequence.
    """

    def __init__(self, experiment: Experiment, seed: int, data_dir: Path | None) -> None:
        self.experiment, self.seed, self.data_dir = experiment, seed, data_dir
        self._search: Search | None = None
        self._state: SearchState | None = None
        self._invalid: ValueError | None = None
        self._saved_state: SearchState | None = None
        self._index: Index | None = None
        self._prefixes = Prefixes(holds)  # the per-call check, from the last call's lists
        self._store = None if self.path is None else StateStore(self.path)

    @property
    def path(self) -> Path | None:
        """The state file, or ``None`` without a volume (``LongRunning``, ``Never``)."""
        return None if self.data_dir is None else self.data_dir / store.FILE_NAME

    @property
    def issued(self) -> tuple[Manifest, ...]:
        """Every assignment issued so far, in order (copies)."""
        return normalized(self._state.issued) if self._state else ()

    def held(self, count: int) -> tuple[Manifest, ...]:
        """The first ``count`` assignments issued, without copying them (do not mutate): what
        a controller that holds ``count`` of them passes back to ``get_suggestions``."""
        return self._state.issued[:count] if self._state else ()

    def validate(self) -> Validation:
        """Katib's ``ValidateAlgorithmSettings``; needs no ``start`` (Katib asks a fresh pod)."""
        return validate(self.experiment)

    def start(self, history: Sequence[Manifest], guess_order: Order | None = None) -> StartReport:
        """Restore the saved state, or rebuild it from ``history``; see the module docstring.
        With ``guess_order``, ``history``'s order is not known (a gRPC request's Trials): a
        restore sorts it by the saved state's names, a rebuild by ``guess_order``."""
        self.stop()
        try:
            search = build(self.experiment, self.seed)
        except (SettingsError, SpaceError) as error:
            self._invalid = error
            return StartReport("new", f"suggestion state not loaded: {error}")
        found = self._saved(search, history, ordered=guess_order is None)
        if found.state is not None:
            self._search, self._state, self._saved_state = search, found.state, found.state
            self._prefixes.agreed(found.history, found.state.issued)  # (_unusable: compared)
            return StartReport("restored", f"{found.why} ({_count(len(found.state.issued))})")
        history = history if guess_order is None else guess_order(history)
        rebuilt, differ = self._rebuild(search, history)
        if not found.trouble and not history:  # saved by the first call (module docstring)
            self._search, self._state = search, rebuilt
            return StartReport("new", f"{found.why}: a new search")
        self._save(rebuilt)
        self._search, self._state = search, rebuilt
        reason = _rebuilt(found.why, len(history), differ)
        return StartReport("rebuilt", reason + (f"; {found.kept}" if found.kept else ""))

    def get_suggestions(
        self,
        have: Sequence[Manifest],
        total: int,
        results: Mapping[str, float | None] | None = None,
    ) -> list[Manifest]:
        """The assignments ``len(have) .. total - 1``: re-served if issued, else new.

        ``results`` are the objective values of the Trials that finished, by Trial name
        (``None``: failed without one); the model-based algorithms learn from them. Fewer
        assignments than asked for means the search is exhausted (a grid or a finite random
        space with every point issued) or waits (a hyperband rung): ``exhausted`` says which.
        """
        search, state = self._running()
        if not self._prefixes.is_prefix(have, state.issued):
            state = self._rebuild(search, have)[0]
        try:
            if total > len(state.issued):
                state = self._extend(search, state, total - len(state.issued), results or {})
            if state is not self._saved_state:
                self._save(state)
        except BaseException:  # a draw that failed half-way (a result it cannot take), a save
            search.forget()  # its live model ran ahead of the saved state
            self._index = None  # it indexes the unsaved state
            raise
        self._state = state
        items = list(normalized(state.issued[len(have) : total]))
        if isinstance(search, Annotating):  # PBT: labels, checkpoint directories
            return search.annotate(
                state.cursor,
                state.issued,
                len(have),
                items,
                results=results or {},
                data_dir=self.data_dir,
            )
        return items

    def exhausted(self, total: int) -> str:
        """Why no assignment can be issued beyond the ``len(issued) < total`` held, or ""
        (fewer than asked for may also mean "not yet": hyperband waits for a rung). A grid or
        a random search of a finite space is exhausted once every point was issued."""
        state, search = self._state, self._search
        if state is None or search is None or len(state.issued) >= total:
            return ""
        index = self._index
        if index is None or index.issued is not state.issued:
            index = Index.of(state.issued)
        if not search.finished(state.cursor, index.points):
            return ""
        return EXHAUSTED.format(count=_count(len(state.issued)))

    def stop(self) -> None:
        """Forget the in-memory state; everything worth keeping is already on the volume."""
        self._search, self._state, self._invalid, self._saved_state = None, None, None, None
        self._index = None

    def _running(self) -> tuple[Search, SearchState]:
        if self._invalid is not None:
            raise self._invalid
        if self._search is None or self._state is None:
            raise RuntimeError("the suggestion server is not started")
        return self._search, self._state

    def _new_state(self, search: Search) -> SearchState:
        meta = self.experiment.metadata
        return SearchState(
            experiment=f"{meta.namespace or 'default'}/{meta.name}",
            algorithm=search.name,
            seed=seed_of(self.experiment, self.seed),
            space=search.space.fingerprint(),
            cursor=search.start(),
        )

    def _saved(self, search: Search, history: Sequence[Manifest], *, ordered: bool) -> _Found:
        """The saved state if it can be resumed; else why not, and whether that is trouble."""
        if self._store is None:
            return _Found(None, "no suggestion volume (state kept in memory only)")
        try:  # its items, where they are the history's
            if ordered:
                saved = self._store.load(history)
            else:
                saved, history = self._store.load_unordered(history)
            cursor = upgraded(search, saved.cursor, self._store.version, len(saved.issued))
            saved = saved if cursor is saved.cursor else replace(saved, cursor=cursor)
            search.check(saved.cursor)
        except Unreadable:  # the history's store is damaged, not the saved state: not moved
            raise
        except StateProblem as problem:
            if problem.kind == "missing":
                return _Found(None, f"suggestion state missing from {self.data_dir}")
            return self._discard(f"suggestion state corrupt ({problem.detail})")
        except ValueError as error:
            return self._discard(f"suggestion state corrupt ({error})")
        why = self._unusable(saved, search, history)
        if why:
            return self._discard(why)
        return _Found(saved, f"suggestion state restored from {self.path}", history=history)

    def _unusable(self, saved: SearchState, search: Search, history: Sequence[Manifest]) -> str:
        """Why a sound state file still cannot be resumed here ("" if it can)."""
        expected = self._new_state(search).identity()
        if saved.identity() != expected:
            fields = ("experiment", "algorithm", "seed", "search space")
            pairs = zip(fields, saved.identity(), expected, strict=True)
            differ = ", ".join(name for name, old, new in pairs if old != new)
            return f"suggestion state in {self.path} is for another search ({differ} changed)"
        proved = self._store is not None and self._store.proved is history  # by its bytes
        if not proved and not holds(history, saved.issued):
            held, known = _count(len(saved.issued)), _count(len(history))
            return f"suggestion state in {self.path} ({held}) disagrees with the history ({known})"
        return ""

    def _discard(self, why: str) -> _Found:
        """Move an unusable state aside (for a post-mortem) rather than overwrite it."""
        assert self._store is not None
        kept = self._store.discard()
        if not kept:
            return _Found(None, why, trouble=True)
        files = "file is" if len(kept) == 1 else "files are"
        return _Found(None, why, trouble=True, kept=f"the old {files} kept as {' and '.join(kept)}")

    def _rebuild(
        self, search: Search, history: Sequence[Manifest]
    ) -> tuple[SearchState, int | None]:
        issued = normalized(history)
        cursor, differ = search.replay([point_of(m) for m in issued])
        if isinstance(search, Annotating):  # PBT reads its lineage from the history's labels
            cursor = search.relabel(cursor, history)
        return replace(self._new_state(search), cursor=cursor, issued=issued), differ

    def _extend(
        self,
        search: Search,
        state: SearchState,
        count: int,
        results: Mapping[str, float | None],
    ) -> SearchState:
        index = self._index
        if index is None or index.issued is not state.issued:
            index = Index.of(state.issued)
        names = index.names
        points, cursor = search.draw(state.cursor, count, index.points, index.known(results))
        self._index = None  # until it is extended (an error on the way leaves none)
        new: list[Manifest] = []
        for number, point in enumerate(points, len(index.issued)):
            name = name_for(self.experiment.metadata.name, state.seed, number, names)
            names[name] = number
            new.append(assignment(name, point))
        index.issued = state.issued + tuple(new)
        index.points = index.points.extended(index.issued, points)
        self._index = index
        return replace(state, cursor=cursor, issued=index.issued)

    def _save(self, state: SearchState) -> None:
        """Make ``state`` durable (remembered as saved only once the save succeeded)."""
        if self._store is not None:
            self._store.save(state)  # creates the directory if it is missing
        self._saved_state = state


def _count(n: int) -> str:
    return f"{n} assignment" if n == 1 else f"{n} assignments"


def _rebuilt(why: str, replayed: int, differ: int | None) -> str:
    reason = f"{why}: rebuilt by replaying {_count(replayed)}"
    if differ is None:
        return reason
    return (
        f"{reason}; the replay differs from the history from assignment {differ + 1} on"
        " (another seed or version?), so the search continues after the history's last"
        " assignment and never issues one of its assignments again"
    )
