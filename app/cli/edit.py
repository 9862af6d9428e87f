"""``katib-resume edit experiment NAME``: change the budget through admission, as an UPDATE.

The edit is what ``kubectl edit`` sends: the stored Experiment with new counts, checked by
Katib's validating webhook against the stored one (``core.admission.admit(new, old, ...)``: a
completed ``Never`` Experiment, or a ``maxTrialCount`` not above the Trials already made, is
denied with Katib's message, exit 1) and stored with the ``resourceVersion`` it was read at. The
edit itself restarts nothing: the controller does, in the next ``katib-resume run NAME``, so the
command says so, asking the Experiment machine's own guard (``core.admission.restarts``).

``--dry-run`` shows what that restart will do without doing it. It runs the real thing on a
copy: the state directory is copied under its lock into a temporary directory, the edit is
applied there and the runtime stepped until the Experiment and its Suggestion are Running again;
what came back (new UIDs), what was reused (same UIDs: the PVC and PV of ``FromVolume``) and
what the suggestion service said when it started are then read off the copy, which is thrown
away. The state directory is never written to: not even the state file's bytes change.
"""

from __future__ import annotations

import argparse
import copy
import fcntl
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from katib_resume.adapters.fake.persistence import STATE_FILE
from katib_resume.adapters.local.observations import FILE as OBSERVATIONS_FILE
from katib_resume.app.cli.kinds import EXPERIMENT, PV, find
from katib_resume.app.cli.restart import Children, children, restart_report, wait_until_running
from katib_resume.app.common.errors import Busy, InputError
from katib_resume.app.embedded.bootstrap import LOCK_FILE, held, opened, session
from katib_resume.app.embedded.driver import namespace, options, require_state
from katib_resume.app.embedded.inbox import FILE as INBOX
from katib_resume.core.admission import admit, restarts
from katib_resume.core.config import KatibConfig
from katib_resume.core.model import Experiment
from katib_resume.core.ports import Cluster

if TYPE_CHECKING:  # only ``--dry-run`` makes a runtime (``bootstrap.session`` imports it)
    from katib_resume.app.embedded.runtime import Runtime

EXIT_OK = 0
_DATABASES = (STATE_FILE, OBSERVATIONS_FILE)
_UNCOPIED = (LOCK_FILE, INBOX, "trials")
FLAGS = {
    "max_trial_count": "maxTrialCount",
    "parallel_trial_count": "parallelTrialCount",
    "max_failed_trial_count": "maxFailedTrialCount",
}


@dataclass(frozen=True, slots=True)
class Edited:
    old: Experiment
    new: Experiment

    def changes(self) -> str:
        old, new = self.old.to_dict()["spec"], self.new.to_dict()["spec"]
        moved = [
            f"{k} {old.get(k)} -> {new.get(k)}" for k in FLAGS.values() if old.get(k) != new.get(k)
        ]
        return ", ".join(moved) or "no change"

    def restarts(self) -> bool:
        """The controller's restart guard (``core.admission.restarts``)."""
        return restarts(self.old, self.new)

    def consequence(self, *, dry_run: bool = False) -> str:
        name, ns = self.new.metadata.name, self.new.namespace
        command = f"`katib-resume run {name} -n {ns}`"
        if self.restarts() and dry_run:
            return f"Experiment restarts when you run {command}"
        if self.restarts():
            return f"Experiment restarts: run {command}"
        if not self.old.is_completed():
            return f"nothing restarts: the Experiment is still running; continue it with {command}"
        return "nothing restarts: the Experiment is completed and cannot be restarted"


def edit(args: argparse.Namespace) -> int:
    changes = {field: getattr(args, flag) for flag, field in FLAGS.items()}
    changes = {field: value for field, value in changes.items() if value is not None}
    if not changes:
        raise InputError(
            "nothing to edit: give --max-trial-count, --parallel-trial-count "
            "or --max-failed-trial-count"
        )
    require_state(args.state_dir, f'experiment "{args.name}"')
    if args.dry_run:
        return dry_run(args, changes)
    with opened(options(args)) as state:
        edited = store_edit(state.cluster, state.config, namespace(args), args.name, changes)
    print(f"experiment.kubeflow.org/{args.name} edited ({edited.changes()})")
    print(edited.consequence())
    return EXIT_OK


def apply_edit(runtime: Runtime, ns: str, name: str, changes: dict[str, int]) -> Edited:
    """``store_edit`` in a running runtime, with its katib-config."""
    config = runtime.controller.config.katib_config()
    return store_edit(runtime.cluster, config, ns, name, changes)


def store_edit(
    cluster: Cluster, config: KatibConfig, ns: str, name: str, changes: dict[str, int]
) -> Edited:
    """Admit and store the UPDATE; ``core.denied.Denied`` if admission refuses it.

    What is stored is the edited object itself: it was defaulted when it was created, and an
    edit of the three counts leaves nothing new to default. Only the Experiment and the
    PersistentVolumes' names (the stale-PV rule) are read: the edit costs one write."""
    stored = find(cluster, EXPERIMENT, ns, name)
    wanted = copy.deepcopy(stored)
    wanted["spec"].update(changes)
    old, new = Experiment.model_validate(stored), Experiment.model_validate(wanted)
    found = cluster.list(PV.api_version, PV.kind, None, {})
    admit(new, old, catalog=config, existing_pvs=frozenset(pv["metadata"]["name"] for pv in found))
    cluster.update(wanted)
    return Edited(old, new)


def dry_run(args: argparse.Namespace, changes: dict[str, int]) -> int:
    ns, state_dir = namespace(args), Path(args.state_dir)
    with tempfile.TemporaryDirectory(prefix="katib-resume-dry-run-") as scratch:
        workspace = Path(scratch) / "state"
        snapshot(state_dir, workspace)
        with session(replace(options(args), state_dir=workspace)) as runtime:
            before = children(runtime, ns, args.name)
            events = len(runtime.cluster.events)
            edited = apply_edit(runtime, ns, args.name, changes)
            steps = wait_until_running(runtime, ns, args.name) if edited.restarts() else 0
            after: Children = children(runtime, ns, args.name)
            news = runtime.cluster.events[events:]
        lines = [
            f"dry run: {state_dir} is unchanged; the restart below ran on a copy of it",
            f"experiment.kubeflow.org/{args.name} would be edited ({edited.changes()})",
            edited.consequence(dry_run=True),
        ]
        if edited.restarts():
            lines += restart_report(before, after, news, steps)
        text = "\n".join(lines) + "\n"
        print(text.replace(str(workspace.resolve()), str(state_dir.resolve())), end="")
    return EXIT_OK


def snapshot(state_dir: Path, into: Path) -> None:
    """Copy the state directory (under its lock, so no command is half-way through a save;
    done for another command by the ``run`` holding it, between two of its steps, when all it
    wrote is committed: ``bootstrap.held``)."""
    if not state_dir.is_dir():
        into.mkdir(parents=True)
        return
    if held(state_dir) is not None:
        _copy_held(state_dir, into)
        return
    with (state_dir / LOCK_FILE).open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(state_dir) from None
        shutil.copytree(state_dir, into, ignore=shutil.ignore_patterns(*_UNCOPIED))


def _copy_held(state_dir: Path, into: Path) -> None:
    """Copy the state directory this process holds open: its databases through SQLite's backup,
    never a plain ``open`` of their files. Closing another descriptor of a file drops every
    POSIX lock the process holds on it (SQLite's own connections share theirs), and the next
    command to open the database, finding no lock on its shared memory, would take the holder
    for gone and reset that memory under it (the holder then dies of SIGBUS)."""
    files = [f"{name}{end}" for name in _DATABASES for end in ("", "-wal", "-shm", "-journal")]
    shutil.copytree(state_dir, into, ignore=shutil.ignore_patterns(*_UNCOPIED, *files))
    for name in _DATABASES:
        if (state_dir / name).exists():
            source, target = sqlite3.connect(state_dir / name), sqlite3.connect(into / name)
            try:
                source.backup(target)
            finally:
                source.close()
                target.close()
