"""Which finished Trials a restart need not reconcile, decided once per version of each Trial.

A restart reconciles every Experiment and every Trial that may have work left; a settled Trial
(``settled``: finished, its finalizer in place, nothing left to write) whose run object is gone
has none, so it is skipped (``Runtime.enqueue_all``). Deciding it reads each Trial's conditions:
a few microseconds a Trial, the whole history, on every restart.

``settled`` reads nothing but the Trial, so its answer for one state of a Trial holds for as
long as the Trial keeps that state, and a ``resourceVersion`` names one state of one object in
this database. ``SettledTrials`` remembers the (namespace, name, ``resourceVersion``) of every
Trial found settled: those the last command kept in its summaries (``app.embedded.kept``, each
Experiment's settled Trials kept when its runtime closed) and those found so since (``judged``:
what this runtime adds to the summaries). A Trial held at a remembered version is settled
without a look at it, in one C-level pass over the Trials' versions (``app.loop.versions``); any
other is judged by ``settled`` as before. So a summary that is missing, damaged (ignored when read),
older than the state (a command killed before it could save) or made before a Trial changed
names nothing that is not settled now: the Trials it does not cover are judged one by one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import compress
from operator import not_

from katib_resume.app.loop.keys import Key, key_of
from katib_resume.app.loop.versions import Seen, seen_of
from katib_resume.core.katib_trial import TRIAL_FINALIZER
from katib_resume.core.manifest import Manifest

_ENDED = frozenset({"Succeeded", "Failed", "MetricsUnavailable", "EarlyStopped", "Killed"})


def finished(trial: Manifest) -> bool:
    """A Trial with a terminal condition that is not being deleted."""
    if trial["metadata"].get("deletionTimestamp"):
        return False
    conditions = (trial.get("status") or {}).get("conditions") or ()
    return any(c.get("type") in _ENDED and c.get("status") == "True" for c in conditions)


def settled(trial: Manifest) -> bool:
    """A finished Trial whose reconcile has nothing left to do but for its run object: its
    finalizer is in place, and an EarlyStopped one has its ``completionTime`` (what
    ``core.plan.trial.decide_trial`` would still write; its tests hold the two together)."""
    if not finished(trial) or TRIAL_FINALIZER not in (trial["metadata"].get("finalizers") or ()):
        return False
    status = trial.get("status") or {}
    stopped = any(
        c.get("type") == "EarlyStopped" and c.get("status") == "True"
        for c in status.get("conditions") or ()
    )
    return not stopped or bool(status.get("completionTime"))


class SettledTrials:
    def __init__(self, kept: Iterable[Seen] = ()) -> None:
        self.known: set[Seen] = set(kept)
        """The Trial versions found settled (kept, or judged by this runtime)."""
        self.judged: dict[Seen, Key | None] = {}
        """The versions this runtime judged settled, with the Experiment each Trial is
        labelled for: what the summaries gain when it closes (``newly``)."""

    def unsettled(self, trials: Sequence[Manifest]) -> list[Manifest]:
        """The Trials that are not ``settled``, in their order: a Trial at a version known
        settled is passed over unread, any other is judged (and remembered if settled)."""
        seen = seen_of(trials)
        unknown = list(map(not_, map(self.known.__contains__, seen)))
        left = []
        for trial, at in compress(zip(trials, seen, strict=True), unknown):
            if settled(trial):
                self.known.add(at)
                self.judged[at] = key_of(trial)
            else:
                left.append(trial)
        return left

    def newly(self, among: Sequence[Manifest] | None = None) -> Mapping[Key, list[Seen]]:
        """The versions this runtime judged settled, by the Experiment they are labelled for
        (``among``: only those of these Trials, the ones a closing runtime did not seal into a
        block, whose versions the summaries need not keep)."""
        wanted = None if among is None else set(seen_of(among))
        found: dict[Key, list[Seen]] = {}
        for at, key in self.judged.items():
            if key is not None and (wanted is None or at in wanted):
                found.setdefault(key, []).append(at)
        return found

    def by_experiment(self, trials: Sequence[Manifest]) -> Mapping[Key, list[Seen]]:
        """The settled ones of ``trials`` (all of a cluster's, as a runtime closes), by the
        Experiment they are labelled for: what each Experiment's summary keeps."""
        self.unsettled(trials)
        found: dict[Key, list[Seen]] = {}
        for trial, at in zip(trials, seen_of(trials), strict=True):
            if at in self.known and (key := key_of(trial)) is not None:
                found.setdefault(key, []).append(at)
        return found
