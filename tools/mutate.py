"""Mutation testing of the core: does some test fail when the code is subtly wrong?

    python -m tools.mutate                 # the default modules, each with its own tests
    python -m tools.mutate --all           # every module of core/ (much longer)
    python -m tools.mutate --module core/plan/marks.py --list
    python -m tools.mutate --only core/plan/marks.py:58:7:cmp     # one mutant, with its output

Each mutant (``tools/mutants.py``) is loaded in a fresh ``pytest -x`` process (forked from this
one, which has imported the libraries but never the project) by ``tools/mutant_plugin.py``, in
memory (no file is changed), against the tests named for its
module in ``TESTS`` (plus ``COMMON`` for a module without its own entry). A failing run kills the
mutant; a run past its time limit (four times the unmutated run, at least 20 s) counts as
killed too. A survivor listed in ``tools/mutants-equivalent.txt`` with the reason it cannot
change behaviour is left out of the score; every other survivor is a hole in the tests.
The score is killed / (killed + survivors not judged equivalent); ``docs/testing.md`` records it,
one row per module as the summary prints them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import NoReturn

import hypothesis  # noqa: F401 (imported once here, not again in every forked child)
import pydantic  # noqa: F401
import pytest
import transitions  # noqa: F401
import yaml  # noqa: F401

from tools.mutant_plugin import install
from tools.mutants import Mutant, mutants

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENT = ROOT / "tools" / "mutants-equivalent.txt"
COMMON = (
    "tests/unit/test_provision.py",
    "tests/integration/test_katib_bugs.py",
    "tests/integration/test_resume_sequences.py",
    "tests/property/test_lifecycle.py",
)
TESTS: dict[str, tuple[str, ...]] = {
    # the admission, configuration, defaulting, object-building and vocabulary modules
    "core/validation.py": (
        "tests/unit/test_validation.py",
        "tests/property/test_admission_names.py",
        "tests/property/test_int32_admission.py",
        "tests/unit/test_local_volumes.py",
    ),
    "core/resources.py": ("tests/unit/test_resources.py",),
    "core/config.py": (
        "tests/unit/test_config.py",
        "tests/unit/test_resources.py",
        "tests/unit/test_volumes.py",
        "tests/unit/test_local_volumes.py",
    ),
    "core/volumes.py": (
        "tests/unit/test_volumes.py",
        "tests/unit/test_local_volumes.py",
        "tests/unit/test_prebound.py",
        "tests/property/test_pv_ownership.py",
    ),
    "core/defaults.py": ("tests/unit/test_defaults.py", "tests/unit/test_validation.py"),
    "core/katib.py": (
        "tests/unit/test_katib_vocabulary.py",
        "tests/unit/test_resources.py",
        "tests/unit/test_volumes.py",
        "tests/unit/test_conditions.py",
        "tests/unit/test_boundaries.py",
    ),
    "core/desired.py": (
        "tests/unit/test_desired.py",
        "tests/unit/test_provision.py",
        "tests/unit/test_consult.py",
    ),
    "core/quantity.py": ("tests/unit/test_quantity.py", "tests/unit/test_config.py"),
    "core/config_specs.py": (
        "tests/unit/test_config.py",
        "tests/unit/test_volumes.py",
        "tests/unit/test_resources.py",
    ),
    "core/local_volumes.py": (
        "tests/unit/test_local_volumes.py",
        "tests/property/test_local_volume_directories.py",
    ),
    "core/katib_trial.py": (
        "tests/unit/test_katib_vocabulary.py",
        "tests/unit/test_run_status.py",
        "tests/unit/test_trial_lifecycle.py",
        "tests/unit/test_trial_plan.py",
    ),
    "core/actions.py": ("tests/unit/test_actions.py", "tests/unit/test_provision.py"),
    "core/policy.py": (
        "tests/unit/test_policy.py",
        "tests/unit/test_validation.py",
        "tests/unit/test_resources.py",
        "tests/integration/test_policy_rows.py",
    ),
    "core/kube.py": ("tests/unit/test_kube.py", "tests/unit/test_models.py"),
    "core/int32.py": ("tests/property/test_int32_admission.py", "tests/unit/test_validation.py"),
    "core/admission.py": ("tests/unit/test_admission.py",),
    "core/addresses.py": ("tests/unit/test_katib_vocabulary.py",),
    # end of the admission, configuration, defaulting, object-building and vocabulary modules
    "core/plan/suggestion.py": (
        "tests/unit/test_volume_loss.py",
        "tests/unit/test_prebound.py",
        "tests/integration/test_suggestion_deleted.py",
        "tests/unit/test_boundaries.py",
        *COMMON,
        "tests/property/test_detectors.py",
        "tests/integration/test_volume_loss.py",
    ),
    "core/plan/children.py": (
        "tests/unit/test_prebound.py",
        "tests/unit/test_volume_loss.py",
        "tests/unit/test_boundaries.py",
        "tests/integration/test_katib_bugs.py",
        "tests/integration/test_local_volumes.py",
        "tests/integration/test_shared_objects.py",
        "tests/integration/test_volume_loss.py",
    ),
    "core/plan/marks.py": (
        "tests/unit/test_volume_loss.py",
        "tests/unit/test_boundaries.py",
        "tests/integration/test_katib_bugs.py",
        "tests/integration/test_volume_loss.py",
        "tests/unit/test_provision.py",
    ),
    "core/prebound.py": (
        "tests/unit/test_prebound.py",
        "tests/unit/test_boundaries.py",
        "tests/integration/test_prebound_volume.py",
    ),
    "core/plan/provision.py": (
        "tests/unit/test_provision_edges.py",
        "tests/property/test_ledger_unused.py",
        *COMMON,
    ),
    "core/conditions.py": (
        "tests/unit/test_conditions.py",
        "tests/property/test_conditions.py",
        "tests/unit/test_boundaries.py",
        "tests/integration/test_katib_bugs.py",
    ),
    "core/names.py": (
        "tests/unit/test_validation.py",
        "tests/unit/test_boundaries.py",
        "tests/property/test_admission_names.py",
        "tests/unit/test_admission.py",
    ),
    "core/trials.py": (
        "tests/unit/test_trials.py",
        "tests/unit/test_trial_accounting_edges.py",
        "tests/unit/test_trial_ledger.py",
        "tests/unit/test_experiment_status.py",
        "tests/unit/test_provision_edges.py",
        "tests/property/test_trials.py",
        "tests/property/test_trial_ledger.py",
        "tests/property/test_restart_sequences.py",
    ),
    "core/plan/experiment.py": (
        "tests/unit/test_experiment_status.py",
        "tests/unit/test_experiment_edges.py",
        "tests/unit/test_boundaries.py",
        "tests/unit/test_provision_edges.py",
        *COMMON,
        "tests/integration/test_exhausted_search.py",
        "tests/property/test_restart_sequences.py",
    ),
    "core/lifecycle/experiment.py": (
        "tests/unit/test_state_tables.py",
        "tests/unit/test_experiment_status.py",
        "tests/unit/test_experiment_edges.py",
        *COMMON,
        "tests/integration/test_exhausted_search.py",
        "tests/property/test_restart_sequences.py",
    ),
    # the Trial planning, lifecycles and object model (each module: its narrow unit tests first)
    "core/observation.py": (
        "tests/unit/test_observation_edges.py",
        "tests/unit/test_observation.py",
        "tests/unit/test_metrics_log.py",
        "tests/unit/test_trial_plan.py",
        "tests/property/test_observation.py",
        "tests/property/test_trial_plan.py",
    ),
    "core/plan/trial.py": (
        "tests/unit/test_trial_plan_edges.py",
        "tests/unit/test_exports.py",
        "tests/unit/test_trial_plan.py",
        "tests/unit/test_trial_detectors.py",
        "tests/unit/test_trial_lifecycle.py",
        "tests/property/test_trial_plan.py",
    ),
    "core/lifecycle/suggestion.py": (
        "tests/unit/test_state_vocabulary.py",
        "tests/unit/test_suggestion_table_edges.py",
        "tests/unit/test_state_tables.py",
        "tests/property/test_lifecycle.py",
        "tests/property/test_detectors.py",
        "tests/unit/test_provision.py",
        "tests/unit/test_volume_loss.py",
        "tests/unit/test_prebound.py",
        "tests/unit/test_boundaries.py",
        "tests/integration/test_katib_bugs.py",
    ),
    "core/lifecycle/states.py": (
        "tests/unit/test_state_vocabulary.py",
        "tests/unit/test_state_tables.py",
        "tests/unit/test_experiment_edges.py",
        "tests/unit/test_provision.py",
        "tests/unit/test_trial_detectors.py",
        "tests/unit/test_trial_lifecycle.py",
        "tests/property/test_trial_lifecycle.py",
        "tests/property/test_lifecycle.py",
    ),
    "core/trial_run.py": (
        "tests/unit/test_trial_run_edges.py",
        "tests/unit/test_trial_plan.py",
        "tests/unit/test_run_kinds.py",
        "tests/property/test_trial_plan.py",
    ),
    "core/objective.py": (
        "tests/unit/test_objective_edges.py",
        "tests/unit/test_trials.py",
        "tests/unit/test_trial_ledger.py",
        "tests/unit/test_observation.py",
        "tests/property/test_trials.py",
        "tests/property/test_trial_ledger.py",
    ),
    "core/objects.py": (
        "tests/unit/test_objects_edges.py",
        "tests/unit/test_exports.py",
        "tests/property/test_objects.py",
        "tests/property/test_objects_blocks.py",
        "tests/unit/test_informer.py",
        "tests/unit/test_relist_digests.py",
        "tests/property/test_relist_digests.py",
        "tests/property/test_informer_blocks.py",
    ),
    "core/digest.py": (
        "tests/unit/test_digest.py",
        "tests/unit/test_exports.py",
        "tests/unit/test_relist_digests.py",
        "tests/property/test_relist_digests.py",
    ),
    "core/trial_ledger.py": (
        "tests/unit/test_trial_ledger_edges.py",
        "tests/unit/test_trial_ledger.py",
        "tests/unit/test_experiment_edges.py",
        "tests/property/test_trial_ledger.py",
        "tests/property/test_trial_book.py",
        "tests/property/test_ledger_unused.py",
        "tests/property/test_ledger_sharing.py",
        "tests/property/test_ledger_restored.py",
        "tests/property/test_ledger_based.py",
        "tests/property/test_kept_folds.py",
    ),
    "core/metrics_log.py": (
        "tests/unit/test_metrics_log_edges.py",
        "tests/unit/test_metrics_log.py",
    ),
    "core/run_status.py": (
        "tests/unit/test_run_status_edges.py",
        "tests/unit/test_run_status.py",
        "tests/property/test_run_status.py",
        "tests/unit/test_trial_plan.py",
    ),
    "core/object_index.py": (
        "tests/unit/test_objects_edges.py",
        "tests/property/test_objects.py",
        "tests/property/test_objects_blocks.py",
        "tests/property/test_index_added.py",
        "tests/unit/test_informer.py",
    ),
    "core/lifecycle/trial.py": (
        "tests/unit/test_lifecycle_machine.py",
        "tests/unit/test_trial_events.py",
        "tests/unit/test_state_vocabulary.py",
        "tests/unit/test_trial_lifecycle.py",
        "tests/unit/test_trial_detectors.py",
        "tests/unit/test_trial_plan.py",
        "tests/property/test_trial_lifecycle.py",
    ),
    "core/plan/trial_effects.py": (
        "tests/unit/test_trial_events.py",
        "tests/unit/test_trial_detectors.py",
        "tests/unit/test_trial_plan.py",
        "tests/unit/test_trial_plan_edges.py",
        "tests/property/test_trial_plan.py",
    ),
    "core/plan/trial_metrics.py": (
        "tests/unit/test_trial_metrics_edges.py",
        "tests/unit/test_trial_plan.py",
        "tests/unit/test_trial_plan_edges.py",
        "tests/property/test_trial_plan.py",
    ),
    "core/lifecycle/machine.py": (
        "tests/unit/test_lifecycle_machine.py",
        "tests/unit/test_docs.py::test_lifecycle_doc_embeds_the_generated_diagram",
        "tests/unit/test_state_tables.py",
        "tests/unit/test_state_vocabulary.py",
        "tests/unit/test_trial_lifecycle.py",
        "tests/unit/test_experiment_edges.py",
        "tests/property/test_lifecycle.py",
    ),
    "core/plan/trial_draft.py": (
        "tests/unit/test_trial_plan_edges.py",
        "tests/unit/test_trial_events.py",
        "tests/unit/test_trial_metrics_edges.py",
        "tests/unit/test_trial_plan.py",
        "tests/unit/test_trial_plan_edges.py",
        "tests/unit/test_trial_detectors.py",
        "tests/property/test_trial_plan.py",
    ),
    "core/plan/needs.py": (
        "tests/unit/test_needs_edges.py",
        "tests/unit/test_provision.py",
        "tests/unit/test_consult.py",
        "tests/unit/test_volume_loss.py",
        "tests/integration/test_suggestion_deleted.py",
    ),
    "core/lifecycle/__init__.py": (
        "tests/unit/test_exports.py",
        "tests/unit/test_lifecycle_machine.py",
        "tests/unit/test_state_tables.py",
    ),
    "core/plan/__init__.py": (
        "tests/unit/test_plan_without_experiment.py",
        "tests/unit/test_needs_edges.py",
        "tests/unit/test_exports.py",
        "tests/unit/test_provision.py",
        "tests/unit/test_consult.py",
        "tests/unit/test_volume_loss.py",
        "tests/integration/test_suggestion_deleted.py",
    ),
    "core/model/__init__.py": ("tests/unit/test_exports.py", "tests/unit/test_models.py"),
    "core/model/experiment.py": (
        "tests/unit/test_model_defaults.py",
        "tests/unit/test_models.py",
        "tests/unit/test_trials.py",
        "tests/unit/test_experiment_status.py",
        "tests/unit/test_experiment_edges.py",
    ),
    "core/plan/finalizer.py": (
        "tests/unit/test_plan_without_experiment.py",
        "tests/unit/test_provision.py",
        "tests/unit/test_consult.py",
        "tests/unit/test_volume_loss.py",
        "tests/integration/test_suggestion_deleted.py",
        "tests/unit/test_manifests_rbac.py",
    ),
    "core/observed.py": (
        "tests/unit/test_observed_values.py",
        "tests/unit/test_needs_edges.py",
        "tests/unit/test_provision.py",
        "tests/unit/test_consult.py",
        "tests/unit/test_volume_loss.py",
        "tests/integration/test_suggestion_deleted.py",
    ),
    "core/model/trial.py": (
        "tests/unit/test_model_defaults.py",
        "tests/unit/test_models.py",
        "tests/unit/test_trials.py",
        "tests/unit/test_trial_lifecycle.py",
        "tests/unit/test_trial_plan.py",
    ),
    "core/model/children.py": (
        "tests/unit/test_model_defaults.py",
        "tests/unit/test_models.py",
        "tests/unit/test_provision.py",
        "tests/unit/test_volume_loss.py",
    ),
    "core/plan/result.py": (
        "tests/unit/test_plan_result.py",
        "tests/unit/test_provision.py",
        "tests/unit/test_experiment_edges.py",
        "tests/unit/test_trial_plan.py",
    ),
    "core/model/suggestion.py": (
        "tests/unit/test_model_defaults.py",
        "tests/unit/test_models.py",
        "tests/unit/test_provision.py",
    ),
    "core/model/meta.py": (
        "tests/unit/test_model_defaults.py",
        "tests/unit/test_models.py",
        "tests/unit/test_provision.py",
        "tests/unit/test_trial_lifecycle.py",
    ),
}
# Definitions moved out of a module to spare short commands its imports keep its tests.
TESTS["core/manifest.py"] = TESTS["core/kube.py"]
TESTS["core/condition_spec.py"] = TESTS["core/conditions.py"]
TESTS["core/trial_phases.py"] = TESTS["core/trials.py"]
DEFAULT = tuple(TESTS)
VERDICTS = ("killed", "timeout", "survived", "equivalent")
ENV = {"HYPOTHESIS_PROFILE": "ci", "RESTART_LIFECYCLES": "40", "PYTHONDONTWRITEBYTECODE": "1"}


@dataclass(frozen=True, slots=True)
class Outcome:
    mutant: Mutant
    verdict: str
    """``killed``, ``timeout`` (counted as killed), ``survived`` or ``equivalent``."""
    seconds: float
    output: str = ""


def tests_for(path: str) -> tuple[str, ...]:
    return TESTS.get(path, COMMON)


def _pytest(tests: Sequence[str], mutant: Mutant | None, timeout: float) -> tuple[int | None, str]:
    """Run ``pytest -x`` on ``tests`` in a forked child (this process has imported pytest and
    the libraries, never the project): its exit code (``None``: killed at ``timeout``) and the
    end of its output."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile("w+") as out:
        pid = os.fork()
        if pid == 0:
            _child(tests, mutant, out.fileno())
        code = _wait(pid, timeout)
        out.seek(0)
        return code, out.read()[-6000:]


def _child(tests: Sequence[str], mutant: Mutant | None, fd: int) -> NoReturn:
    code = 3
    try:
        os.setpgid(0, 0)  # its own group: a timeout ends whatever it started too
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.environ.update(ENV)
        if mutant is not None:
            install(mutant.path, mutant.index)
        code = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *tests]))
    except BaseException:  # a child must never return into the parent's code
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _wait(pid: int, timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.01)


def baseline(path: str) -> float:
    """Seconds the module's tests take unmutated; they must pass."""
    started = time.monotonic()
    code, output = _pytest(tests_for(path), None, 600)
    if code != 0:
        raise SystemExit(f"the tests of {path} fail without a mutant:\n{output}")
    return time.monotonic() - started


def run(mutant: Mutant, limit: float, equivalent: dict[str, str]) -> Outcome:
    started = time.monotonic()
    code, output = _pytest(tests_for(mutant.path), mutant, limit)
    seconds = time.monotonic() - started
    if code is None:
        return Outcome(mutant, "timeout", seconds)
    if code != 0:
        return Outcome(mutant, "killed", seconds, output)
    verdict = "equivalent" if mutant.id in equivalent else "survived"
    return Outcome(mutant, verdict, seconds, output)


def load_equivalent() -> dict[str, str]:
    """Mutant id -> why it cannot change behaviour (``tools/mutants-equivalent.txt``)."""
    judged: dict[str, str] = {}
    for line in EQUIVALENT.read_text().splitlines() if EQUIVALENT.exists() else ():
        text = line.strip()
        if text and not text.startswith("#"):
            key, _, reason = text.partition(" ")
            judged[key] = reason.strip()
    return judged


def _counts(outcomes: Sequence[Outcome]) -> tuple[int, int, int, int, float]:
    """(killed, of them by timeout, survived, judged equivalent, score in %)."""
    count = {v: sum(o.verdict == v for o in outcomes) for v in VERDICTS}
    killed = count["killed"] + count["timeout"]
    scored = killed + count["survived"]
    score = 100.0 * killed / scored if scored else 100.0
    return killed, count["timeout"], count["survived"], count["equivalent"], score


def rows(outcomes: Sequence[Outcome]) -> list[str]:
    """One row of ``docs/testing.md``'s score table per module, in the order they ran."""
    by_module: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_module.setdefault(outcome.mutant.path, []).append(outcome)
    found = []
    for path, mine in by_module.items():
        killed, timeout, survived, judged, score = _counts(mine)
        cells = (f"`{path}`", len(mine), killed, timeout, survived, judged, f"{score:.1f} %")
        found.append("| " + " | ".join(map(str, cells)) + " |")
    return found


def summary(outcomes: Sequence[Outcome], equivalent: dict[str, str]) -> str:
    killed, timeout, survived, judged_count, score = _counts(outcomes)
    judged = [o for o in outcomes if o.verdict == "equivalent"]
    lines = [
        f"{len(outcomes)} mutants: {killed} killed ({timeout} by timeout), "
        f"{survived} survived, {judged_count} judged equivalent",
        f"score: {score:.1f} % of the mutants that can change behaviour",
    ]
    lines += [f"  survived: {o.mutant}" for o in outcomes if o.verdict == "survived"]
    lines += [f"  equivalent: {o.mutant} -- {equivalent[o.mutant.id]}" for o in judged]
    lines += ["per module (mutants, killed, by timeout, survived, equivalent, score):"]
    return "\n".join([*lines, *rows(outcomes)])


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.mutate", description=__doc__)
    parser.add_argument("--all", action="store_true", help="every module of core/")
    parser.add_argument("--module", action="append", default=[], help="a module (repeatable)")
    parser.add_argument("--only", action="append", default=[], help="a mutant id (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    return parser.parse_args(argv)


def _modules(args: argparse.Namespace) -> list[str]:
    if args.only:
        return sorted({only.split(":")[0] for only in args.only})
    if args.module:
        return list(args.module)
    if args.all:
        return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "core").rglob("*.py"))
    return list(DEFAULT)


def _run_module(path: str, args: argparse.Namespace, equivalent: dict[str, str]) -> list[Outcome]:
    found = [m for m in mutants(ROOT / path, ROOT) if not args.only or m.id in args.only]
    if args.list:
        print("\n".join(map(str, found)))
        return []
    if not found:
        return []
    limit = max(20.0, 4 * baseline(path))
    print(f"{path}: {len(found)} mutants, tests {' '.join(tests_for(path))}", flush=True)
    outcomes = []
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for outcome in pool.map(partial(run, limit=limit, equivalent=equivalent), found):
            outcomes.append(outcome)
            line = f"  {outcome.verdict:10} {outcome.seconds:4.1f}s {outcome.mutant}"
            print(line, flush=True)
            if args.only:
                print(outcome.output)
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    equivalent = load_equivalent()
    outcomes = [o for path in _modules(args) for o in _run_module(path, args, equivalent)]
    if outcomes:
        print(summary(outcomes, equivalent))
    return 1 if any(o.verdict == "survived" for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
