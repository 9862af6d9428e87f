"""The local trial controller: runs the Trials the planner creates and reports how they ended.

On a cluster, Katib's trial controller turns a Trial into a Job, the metrics collector reads its
output, and the controller writes the result on the Trial's status. Locally one ``tick`` does all
of it for every Trial that has not ended: a Trial that never ran is marked ``Created`` and
``Running``, is run to completion (synchronously: local trials are quick), and gets its terminal
status (``core.trials.classify`` then reads it as Succeeded, Failed or MetricsUnavailable). By
default a run is the synthetic objective (``objective``); with ``command=True`` it is the primary
container's command (``command``).

Every write carries the ``resourceVersion`` it was based on, and a world error (``Conflict``,
``NotFound``, ``Unavailable``...) skips the Trial for this tick instead of crashing the loop; the
next tick reads the Trial again. An outcome whose write failed is remembered and written next
tick, so a Trial is never run twice because of a lost race.

Crash recovery. The runner remembers, in memory only, which Trials it started. A Trial that is
``Running`` but unknown to this instance was left behind by a runner that died. It is re-run as
the same object, so the Experiment's ``maxTrialCount`` is not spent twice, and the re-run is
first recorded in the annotation ``resume.katib.kubeflow.org/attempts`` (absent means the one
original attempt). That write is also a claim: two runners racing for one lost Trial cannot both
win it. A Trial that was lost on each of ``max_attempts`` attempts is marked Failed, reason
``TrialLost``, rather than retried forever. The annotation is written with ``Cluster.update``.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from katib_resume.adapters.local.trials.command import run_command
from katib_resume.adapters.local.trials.objective import synthetic_outcome
from katib_resume.adapters.local.trials.outcome import (
    REASON_LOST,
    Outcome,
    finished_status,
    is_running,
    is_terminal,
    started_status,
)
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.model.trial import Trial
from katib_resume.core.objects import EVERY, Cursor, IndexedCache, key_of
from katib_resume.core.ports import Cluster, ClusterError, NotFound

ANNOTATION_ATTEMPTS = "resume.katib.kubeflow.org/attempts"
DEFAULT_TIMEOUT = 600.0
TrialKey = tuple[str, str, str]
"""Namespace, name and UID: a Trial re-created under the same name is another Trial."""


class TrialRunner:
    """Katib's trial controller, Job and metrics collector, played locally (module docstring).

    ``timeout`` bounds one command run, in seconds. Keep one runner per process: its memory of
    the Trials it started is what tells its own runs from those a dead runner left behind.
    ``parse`` reads a listed Trial: a cache's objects can be parsed by a cache of models shared
    with the controller (the embedded runtime's), since both read the same objects.
    """

    def __init__(
        self,
        cluster: Cluster,
        now: Callable[[], datetime],
        *,
        command: bool = False,
        workdir: Path | None = None,
        max_attempts: int = 2,
        timeout: float = DEFAULT_TIMEOUT,
        parse: Callable[[Manifest], Trial] = Trial.model_validate,
    ) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, not {max_attempts}")
        self._cluster, self._now = cluster, now
        self._command, self._workdir, self._timeout = command, workdir, timeout
        self._max_attempts, self._parse = max_attempts, parse
        self._started: set[TrialKey] = set()
        self._results: dict[TrialKey, Outcome] = {}
        self._settled: dict[str, str] = {}
        self._cursor: Cursor | None = None
        self._open: dict[tuple[str, str], Manifest] = {}
        """On an indexed cache: the Trials not seen settled since they last changed."""

    def tick(self, namespace: str | None = None) -> int:
        """Advance every unfinished Trial once; the number of Trials whose status moved on.

        A Trial that had ended (or was being deleted) at the same UID and ``resourceVersion``
        on the last tick is passed over without parsing it again: that version of it was
        already seen to need nothing, and most Trials of a lifecycle have ended. On a watch
        cache that says what changed (``IndexedCache``) such a Trial is not even visited: a
        tick reads the Trials that changed and those not yet ended, never the whole history.
        """
        try:
            manifests = self._unsettled(namespace)
        except ClusterError:
            return 0
        settled: dict[str, str] = {}
        moved = sum(self._advance(manifest, settled) for manifest in manifests)
        if isinstance(self._cluster, IndexedCache):  # a settled Trial returns when it changes
            for manifest in manifests:
                if manifest["metadata"].get("uid") in settled:
                    self._open.pop(key_of(manifest)[2:], None)
        else:
            self._settled = settled  # only the Trials still listed: the memory stays bounded
        return moved

    def _unsettled(self, namespace: str | None) -> list[Manifest]:
        """The Trials to visit: all of them, or, on an indexed cache, the open ones."""
        if not isinstance(self._cluster, IndexedCache):
            return list(self._cluster.list(API_VERSION, "Trial", namespace, {}))
        delta = self._cluster.changes(API_VERSION, "Trial", EVERY, "", self._cursor)
        if delta.complete:
            self._open = {}
        for name in delta.removed:
            self._open.pop(name, None)
        self._open.update((key_of(obj)[2:], obj) for obj in delta.changed)
        self._cursor = delta.cursor
        return [o for (ns, _), o in self._open.items() if namespace in (None, ns)]

    def _advance(self, manifest: Manifest, settled: dict[str, str]) -> bool:
        meta = manifest.get("metadata") or {}
        uid, version = meta.get("uid"), meta.get("resourceVersion")
        if uid and version and self._settled.get(uid) == version:
            settled[uid] = version
            return False
        try:
            trial = self._parse(manifest)
        except ValueError:  # not a Trial this runner can read: leave it to whoever wrote it
            return False
        key = _key(trial)
        if trial.metadata.is_deleting or is_terminal(trial):
            self._results.pop(key, None)  # memory is only needed while the Trial runs
            self._started.discard(key)
            if uid and version:
                settled[uid] = version
            return False
        try:
            return self._step(key, manifest, trial)
        except ClusterError:  # nothing was written; the next tick reads the Trial again
            return False

    def _step(self, key: TrialKey, manifest: Manifest, trial: Trial) -> bool:
        if key in self._results:
            self._write_outcome(key, trial, self._results[key])
            return True
        if not is_running(trial):
            written = self._write_status(trial, started_status(trial, self._now()))
            self._run(key, written)
            return True
        if key in self._started:  # ours, still running (runs are synchronous: not expected)
            return False
        return self._recover(key, manifest, trial)

    def _recover(self, key: TrialKey, manifest: Manifest, trial: Trial) -> bool:
        """Re-run a Trial a dead runner left ``Running``, or give up on it (module docstring)."""
        attempts = _attempts(trial)
        if attempts >= self._max_attempts:
            self._write_outcome(
                key, trial, Outcome.failed(self._lost_message(attempts), REASON_LOST)
            )
            return True
        annotations = {**trial.metadata.annotations, ANNOTATION_ATTEMPTS: str(attempts + 1)}
        meta = {**manifest["metadata"], "annotations": annotations}
        self._run(key, self._cluster.update({**manifest, "metadata": meta}))
        return True

    def _lost_message(self, attempts: int) -> str:
        return (
            f"Trial was lost: its runner stopped while running it, {attempts} time(s) "
            f"(max attempts {self._max_attempts})"
        )

    def _run(self, key: TrialKey, manifest: Manifest) -> None:
        """Run the Trial to its outcome, then write it (remembered if the write fails)."""
        trial = self._parse(manifest)
        spec = manifest.get("spec") or {}
        if self._command:
            outcome = run_command(spec, self._trial_dir(key), self._timeout)
        else:
            outcome = synthetic_outcome(spec)
        self._started.add(key)
        self._results[key] = outcome
        try:
            self._write_outcome(key, trial, outcome)
        except ClusterError:  # the Trial did move on (it ran); its outcome is written next tick
            return

    def _write_outcome(self, key: TrialKey, trial: Trial, outcome: Outcome) -> None:
        try:
            self._write_status(trial, finished_status(trial, outcome, self._now()))
        except NotFound:  # deleted meanwhile: nobody will read the outcome
            self._results.pop(key, None)
            raise
        self._results.pop(key, None)

    def _write_status(self, trial: Trial, status: Manifest) -> Manifest:
        ref = ObjectRef(API_VERSION, "Trial", trial.metadata.namespace, trial.metadata.name)
        return self._cluster.update_status(ref, status, trial.metadata.resource_version)

    def _trial_dir(self, key: TrialKey) -> Path:
        """``<workdir>/<namespace>/<name>``: the same directory for every attempt of a Trial."""
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="katib-trials-"))
        namespace, name, _ = key
        return self._workdir / _safe(namespace) / _safe(name)


def _key(trial: Trial) -> TrialKey:
    meta = trial.metadata
    return (meta.namespace or "default", meta.name, meta.uid or "")


def _attempts(trial: Trial) -> int:
    """Attempts so far: the annotation, or 1 (the original run) when absent or unreadable."""
    raw = trial.metadata.annotations.get(ANNOTATION_ATTEMPTS, "")
    return max(int(raw), 1) if raw.isdigit() else 1


def _safe(part: str) -> str:
    """A path component that stays inside the working directory, whatever the name."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", part)
    return "_" if cleaned in ("", ".", "..") else cleaned
