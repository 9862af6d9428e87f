"""kubectl's habits on the embedded command line, as a kubectl user types them.

Most tests call ``main()`` in this process over a copy of one completed run of Katib's
from-volume example (fast, and the same code path as the script); the few that are about the
process itself (``-n`` before the command, what parsing imports) run ``python -m katib_resume``.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.app.cli.handlers import HANDLERS
from katib_resume.app.cli.main import build_parser, hoist_flags, main
from tests.support.imports import MODEL_LIBRARIES, imported_by
from tests.support.state_dir import committed

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
NAME, NS = "from-volume-resume", "kubeflow"
PVC_NAME, PV_NAME = "from-volume-resume-random", "from-volume-resume-random-kubeflow"
TRIAL_LABEL = f"katib.kubeflow.org/experiment={NAME}"


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str


def katib(*args: str | Path) -> Done:
    """``katib-resume ARGS`` through ``main()``, with what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as stop:  # argparse's own errors
            code = stop.code if isinstance(stop.code, int) else 2
    return Done(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def completed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    state = tmp_path_factory.mktemp("habits") / "state"
    done = katib("run", "-f", EXAMPLE, "--state-dir", state)
    assert done.code == 0, done.err
    return state


@pytest.fixture
def state(completed: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "state"
    shutil.copytree(completed, copy, ignore=shutil.ignore_patterns(".lock"))
    return copy


def get(state: Path, *args: str) -> Done:
    return katib("get", *args, "-n", NS, "--state-dir", state)


def names(state: Path, *args: str) -> list[str]:
    done = get(state, *args, "-o", "name")
    assert done.code == 0, done.err
    return done.out.splitlines()


def as_json(state: Path, *args: str) -> Any:
    done = get(state, *args, "-o", "json")
    assert done.code == 0, done.err
    return json.loads(done.out)


# -l/--selector


@pytest.mark.parametrize(
    ("kind", "selector", "count"),
    [
        ("trials", TRIAL_LABEL, 12),
        ("trials", "katib.kubeflow.org/experiment==" + NAME, 12),
        ("trials", "katib.kubeflow.org/experiment!=" + NAME, 0),
        ("trials", f"katib.kubeflow.org/experiment in ({NAME}, other)", 12),
        ("trials", f"katib.kubeflow.org/experiment notin ({NAME})", 0),
        ("trials", "katib.kubeflow.org/experiment", 12),
        ("trials", "!katib.kubeflow.org/experiment", 0),
        ("pv", "type=local", 1),
        ("pv", "type,!other", 1),
        ("pvc", "type", 0),
        ("experiments", "!type", 1),
    ],
)
def test_selectors_keep_the_objects_whose_labels_match(
    state: Path, kind: str, selector: str, count: int
) -> None:
    assert len(names(state, kind, "-l", selector)) == count


def test_a_selector_with_no_match_says_no_resources_found(state: Path) -> None:
    done = get(state, "trials", "--selector", "katib.kubeflow.org/experiment=other")
    assert (done.code, done.out, done.err) == (0, "", f"No resources found in {NS} namespace.\n")


@pytest.mark.parametrize("selector", ["a in b", "a in ()", "a b", "a,", "a=b=c", "a=(b)"])
def test_a_bad_selector_is_one_line_and_exit_1_as_in_kubectl(state: Path, selector: str) -> None:
    done = get(state, "trials", "-l", selector)
    assert (done.code, done.out) == (1, "")
    assert done.err.startswith(f"katib-resume: error: unable to parse selector {selector!r}: ")
    assert len(done.err.splitlines()) == 1


def test_a_name_and_a_selector_together_are_refused(state: Path) -> None:
    done = get(state, "experiment", NAME, "-l", "a=b")
    assert done.code == 2 and "a NAME cannot be given with a selector" in done.err


# -o name and -o jsonpath=


def test_output_name_is_kind_dot_group_slash_name(state: Path) -> None:
    assert names(state, "experiments,pvc,pv") == [
        f"experiment.kubeflow.org/{NAME}",
        f"persistentvolumeclaim/{PVC_NAME}",
        f"persistentvolume/{PV_NAME}",
    ]
    assert all(line.startswith("event/") for line in names(state, "events"))


def test_jsonpath_prints_kubectls_template_over_a_list_or_one_object(state: Path) -> None:
    trials = as_json(state, "trials")["items"]
    listed = get(state, "trials", "-o", "jsonpath={.items[*].metadata.name}")
    assert listed.out == " ".join(t["metadata"]["name"] for t in trials)  # no newline added
    one = get(state, "experiment", NAME, "-o", "jsonpath={.spec.maxTrialCount}")
    assert one.out == "12"
    ranged = get(
        state,
        "trials",
        "-o",
        'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[-1:].type}{"\\n"}{end}',
    )
    assert ranged.out.splitlines() == [f"{t['metadata']['name']}=Succeeded" for t in trials]
    missing = get(state, "experiment", NAME, "-o", "jsonpath={.spec.noSuchField}")
    assert (missing.code, missing.out) == (0, "")


def test_a_bad_jsonpath_template_is_exit_1_and_prints_nothing(state: Path) -> None:
    done = get(state, "trials", "-o", "jsonpath={.items[")
    assert (done.code, done.out) == (1, "")
    assert done.err == "katib-resume: error: error parsing jsonpath {.items[: unclosed action\n"


# KIND/NAME and KIND,KIND


def test_kind_slash_name_finds_objects_of_several_kinds(state: Path) -> None:
    both = as_json(state, f"experiment/{NAME}", f"pvc/{PVC_NAME}")
    assert both["kind"] == "List"
    assert [item["kind"] for item in both["items"]] == ["Experiment", "PersistentVolumeClaim"]
    one = as_json(state, f"exp/{NAME}")
    assert (one["kind"], one["metadata"]["name"]) == ("Experiment", NAME)


def test_comma_separated_kinds_print_one_table_each_with_kind_names(state: Path) -> None:
    done = get(state, "pvc,pv")
    pvc_table, pv_table = done.out.split("\n\n")
    assert pvc_table.splitlines()[1].split()[0] == f"persistentvolumeclaim/{PVC_NAME}"
    assert pv_table.splitlines()[0].split()[:2] == ["NAME", "CAPACITY"]
    assert pv_table.splitlines()[1].split()[0] == f"persistentvolume/{PV_NAME}"


def test_a_name_after_a_flag_is_still_a_name(state: Path) -> None:
    done = katib("get", "pvc", "-n", NS, PVC_NAME, "--state-dir", state, "-o", "name")
    assert (done.code, done.out) == (0, f"persistentvolumeclaim/{PVC_NAME}\n")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["pvc", f"pv/{PV_NAME}"], "no need to give the kind 'pvc' apart"),
        (["pvc/"], "'pvc/': expected KIND/NAME"),
        (["pvc,widgets"], "unknown kind 'widgets'"),
    ],
)
def test_malformed_targets_are_bad_input(state: Path, args: list[str], needle: str) -> None:
    done = get(state, *args)
    assert done.code == 2 and needle in done.err


# NotFound: kubectl's words, exit status 1


def test_not_found_is_kubectls_line_and_exit_1_after_printing_what_was_found(state: Path) -> None:
    done = get(state, "experiment", NAME, "nope", "-o", "name")
    assert done.code == 1
    assert done.out == f"experiment.kubeflow.org/{NAME}\n"
    assert done.err == 'Error from server (NotFound): experiments.kubeflow.org "nope" not found\n'
    for output in ("json", "yaml", "jsonpath={.kind}", "name", "wide"):
        alone = get(state, "experiment", "nope", "-o", output)
        assert (alone.code, alone.out) == (1, ""), output
        assert alone.err.startswith("Error from server (NotFound): "), output
    for command in ("describe", "delete"):
        done = katib(command, "deploy", "nope", "-n", NS, "--state-dir", state)
        assert done.code == 1
        assert done.err == 'Error from server (NotFound): deployments.apps "nope" not found\n'


def test_not_found_on_a_missing_state_directory_is_exit_1_and_creates_nothing(
    tmp_path: Path,
) -> None:
    nothing = tmp_path / "nothing"
    for args in (["get", "exp", "x"], ["describe", "pv", "x"], ["delete", "exp", "x"]):
        done = katib(*args, "--state-dir", nothing)
        assert done.code == 1 and done.err.startswith("Error from server (NotFound): "), args
    assert not nothing.exists()


# describe and delete for every kind


@pytest.mark.parametrize(
    ("target", "field"),
    [
        (f"experiment/{NAME}", "Resume policy: FromVolume"),
        (f"suggestion/{NAME}", f"PersistentVolumeClaim: {PVC_NAME} (UID "),
        (f"pvc/{PVC_NAME}", f"Volume:        {PV_NAME}"),
        (f"pv/{PV_NAME}", "Reclaim policy: Delete"),
        (f"event/{NAME}.{1:016x}", "Involved object: experiment/from-volume-resume"),
    ],
)
def test_describe_knows_every_kind(state: Path, target: str, field: str) -> None:
    done = katib("describe", target, "-n", NS, "--state-dir", state)
    assert done.code == 0, done.err
    assert done.out.startswith("Name:") and field in done.out


def test_describe_by_selector_describes_each_object_in_turn(state: Path) -> None:
    done = katib("describe", "trials", "-l", TRIAL_LABEL, "-n", NS, "--state-dir", state)
    assert done.code == 0, done.err
    assert done.out.count("\nName:") + done.out.startswith("Name:") == 12
    assert f"Controlled by: Experiment/{NAME}" in done.out
    assert "Assignments:   lr=" in done.out


def uids(state: Path, *args: str) -> set[str]:
    return set(get(state, *args, "-o", "jsonpath={..metadata.uid}").out.split())


def test_delete_waits_for_the_uid_to_go_even_if_a_controller_brings_the_name_back(
    state: Path,
) -> None:
    trial = names(state, "trials")[0].partition("/")[2]
    before = uids(state, "trials", trial)
    done = katib("delete", f"trial/{trial}", "-n", NS, "--state-dir", state)
    assert (done.code, done.out) == (0, f'trial.kubeflow.org "{trial}" deleted\n'), done.err
    after = uids(state, "trials", trial)  # the controller made it again for its assignment
    assert len(before) == 1 and not before & after
    pvc = uids(state, "pvc", PVC_NAME)
    done = katib("delete", "pvc", PVC_NAME, "-n", NS, "--state-dir", state)
    assert done.out == f'persistentvolumeclaim "{PVC_NAME}" deleted\n', done.err
    assert len(pvc) == 1 and not pvc & uids(state, "pvc")


def test_delete_by_selector_deletes_what_get_would_show(state: Path) -> None:
    before = uids(state, "trials")
    nothing = katib("delete", "trials", "-l", "a=b", "-n", NS, "--state-dir", state)
    assert (nothing.code, nothing.out, nothing.err) == (0, "", "No resources found\n")
    done = katib("delete", "trials", "-l", TRIAL_LABEL, "-n", NS, "--state-dir", state)
    assert done.code == 0, done.err
    assert len(done.out.splitlines()) == 12 and not before & uids(state, "trials")


def test_deleting_a_bound_pv_says_what_holds_it(state: Path) -> None:
    done = katib("delete", f"pv/{PV_NAME}", "--state-dir", state)
    assert done.code == 2 and len(done.err.splitlines()) == 1
    assert "held by the finalizers kubernetes.io/pv-protection" in done.err


def test_events_cannot_be_deleted_and_nothing_changes(state: Path) -> None:
    before = committed(state)
    done = katib("delete", f"event/{NAME}.{1:016x}", "-n", NS, "--state-dir", state)
    assert done.code == 2 and "events cannot be deleted here" in done.err
    assert committed(state) == before


def test_delete_f_takes_what_get_o_yaml_printed(state: Path, tmp_path: Path) -> None:
    listing = tmp_path / "trials.yaml"
    listing.write_text(get(state, "trials", "-o", "yaml").out)
    before = uids(state, "trials")
    done = katib("delete", "-f", listing, "--state-dir", state)
    assert done.code == 0, done.err
    assert len(done.out.splitlines()) == 12 and not before & uids(state, "trials")
    done = katib("delete", "-f", EXAMPLE, "--state-dir", state)  # the file's own namespace
    assert done.code == 0, done.err
    assert done.out.startswith(f'experiment.kubeflow.org "{NAME}" deleted\n')
    assert names(state, "experiments,suggestions,pvc,pv") == []


@pytest.mark.parametrize(
    ("document", "needle"),
    [
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}, "no kind 'Pod'"),
        ({"apiVersion": "v1", "kind": "PersistentVolume"}, "without metadata.name"),
        (["not", "an", "object"], "expected a mapping"),
    ],
)
def test_delete_f_of_something_it_cannot_delete_is_bad_input(
    state: Path, tmp_path: Path, document: object, needle: str
) -> None:
    path = tmp_path / "thing.yaml"
    path.write_text(yaml.safe_dump(document))
    done = katib("delete", "-f", path, "--state-dir", state)
    assert done.code == 2 and needle in done.err


# apply -f


def test_apply_creates_then_updates_through_admission(tmp_path: Path) -> None:
    state = tmp_path / "state"
    created = katib("apply", "-f", EXAMPLE, "--state-dir", state)
    assert created.out.splitlines()[0] == f"experiment.kubeflow.org/{NAME} created", created.err
    again = katib("apply", "-f", EXAMPLE, "--state-dir", state)
    assert again.out == f"experiment.kubeflow.org/{NAME} unchanged\n"
    assert katib("run", NAME, "-n", NS, "--state-dir", state).code == 0
    assert len(names(state, "trials")) == 12
    raised = tmp_path / "twenty.yaml"
    raised.write_text(EXAMPLE.read_text().replace("maxTrialCount: 12", "maxTrialCount: 20"))
    configured = katib("apply", "-f", raised, "--state-dir", state)
    assert configured.out.splitlines() == [
        f"experiment.kubeflow.org/{NAME} configured (maxTrialCount)",
        f"Experiment restarts: run `katib-resume run {NAME} -n {NS}`",
    ], configured.err
    assert katib("run", NAME, "-n", NS, "--state-dir", state).code == 0
    assert len(names(state, "trials")) == 20


def test_apply_of_a_change_katib_refuses_is_denied_with_katibs_message(
    state: Path, tmp_path: Path
) -> None:
    before = committed(state)
    lowered = tmp_path / "five.yaml"
    lowered.write_text(EXAMPLE.read_text().replace("maxTrialCount: 12", "maxTrialCount: 5"))
    done = katib("apply", "-f", lowered, "--state-dir", state)
    assert done.code == 1
    assert "must be greater than status.trials count" in done.err
    assert as_json(state, "experiment", NAME)["spec"]["maxTrialCount"] == 12
    assert committed(state) == before


def test_apply_refuses_what_it_would_not_do(state: Path, tmp_path: Path) -> None:
    labelled = yaml.safe_load(EXAMPLE.read_text())
    labelled["metadata"]["labels"] = {"team": "a"}
    path = tmp_path / "labelled.yaml"
    path.write_text(yaml.safe_dump(labelled))
    done = katib("apply", "-f", path, "--state-dir", state)
    assert done.code == 2 and "its labels are kept from its creation" in done.err
    seeded = katib("apply", "-f", EXAMPLE, "--seed", "7", "--state-dir", state)
    assert seeded.code == 2 and "--seed does nothing here" in seeded.err
    other = katib("apply", "-f", EXAMPLE, "-n", "team-a", "--state-dir", state)
    assert other.code == 2 and 'does not match the namespace "team-a"' in other.err


# flags: only a command's own; -n before the command


@pytest.mark.parametrize(
    "args",
    [
        ["get", "pvc", "--config", "katib-config.yaml"],
        ["get", "pvc", "--seed", "3"],
        ["get", "pvc", "--trial-command"],
        ["describe", "exp", NAME, "-o", "json"],
        ["describe", "exp", NAME, "-A"],
        ["edit", "exp", NAME, "--max-trial-count", "20", "--seed", "3"],
        ["edit", "exp", NAME, "--max-trial-count", "20", "-l", "a=b"],
        ["delete", "exp", NAME, "--config", "katib-config.yaml"],
        ["delete", "exp", NAME, "--seed", "3"],
        ["apply", "-f", "x.yaml", "--trial-command"],
        ["run", NAME, "--seed", "3"],
        ["run", NAME, "-o", "json"],
        ["demo", "-n", NS],
        ["demo", "--state-dir", "x"],
        ["plan", "-f", "x.yaml", "--state-dir", "x"],
        ["plan", "-f", "x.yaml", "-n", NS],
        ["validate", "-f", "x.yaml", "--seed", "3"],
        ["get", "pvc", "-A", "-n", NS],
        ["delete", "exp", NAME, "-f", "x.yaml"],
        ["delete", "-f", "x.yaml", "-l", "a=b"],
        ["delete", "exp", NAME, "-l", "a=b"],
    ],
)
def test_a_flag_that_would_do_nothing_is_refused(state: Path, args: list[str]) -> None:
    before = committed(state)
    done = katib(*args, "--state-dir", state) if "--state-dir" not in args else katib(*args)
    assert done.code == 2, done
    assert done.err.startswith("katib-resume: error: ") and len(done.err.splitlines()) == 1
    assert committed(state) == before


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "katib_resume", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)


def test_namespace_before_the_command_as_kubectl_users_type_it(state: Path) -> None:
    for first in (["-n", NS], [f"--namespace={NS}"], [f"-n{NS}"]):
        done = cli(*first, "get", "experiments", "-o", "name", "--state-dir", state)
        assert (done.returncode, done.stdout) == (0, f"experiment.kubeflow.org/{NAME}\n"), first
    later = cli("-n", "elsewhere", "get", "exp", "-n", NS, "-o", "name", "--state-dir", state)
    assert later.stdout == f"experiment.kubeflow.org/{NAME}\n"  # the later one wins, as in kubectl
    refused = cli("-n", NS, "diagram", "experiment")
    assert refused.returncode == 2
    assert refused.stderr.startswith("katib-resume: error: -n does nothing for diagram")


def test_state_dir_before_the_command_means_what_it_means_after(state: Path) -> None:
    for first in (["--state-dir", str(state)], [f"--state-dir={state}"]):
        done = cli(*first, "-n", NS, "get", "experiments", "-o", "name")
        assert (done.returncode, done.stdout) == (0, f"experiment.kubeflow.org/{NAME}\n"), first
    refused = cli("--state-dir", state, "diagram", "experiment")
    assert refused.returncode == 2
    assert refused.stderr.startswith("katib-resume: error: --state-dir does nothing for diagram")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["-n", "a", "get", "pv"], ["get", "-n", "a", "pv"]),
        (["--namespace=a", "get", "pv", "-n", "b"], ["get", "--namespace=a", "pv", "-n", "b"]),
        (["-na", "manifests"], ["manifests", "-na"]),
        (["--namespace", "a", "controller"], ["controller", "--namespace", "a"]),
        (["get", "pv", "-n", "a"], ["get", "pv", "-n", "a"]),
        (["-n"], ["-n"]),
        (["-n", "a"], ["-n", "a"]),
        (["-h"], ["-h"]),
        (["--state-dir", "d", "get", "pv"], ["get", "--state-dir", "d", "pv"]),
        (["--state-dir=d", "-n", "a", "run", "x"], ["run", "--state-dir=d", "-n", "a", "x"]),
        (["--state-dir"], ["--state-dir"]),
    ],
)
def test_namespace_and_state_dir_flags_before_the_command_move_after_its_name(
    argv: list[str], expected: list[str]
) -> None:
    assert hoist_flags(argv, build_parser()) == expected


def test_a_namespace_flag_the_command_lacks_is_refused_before_the_command() -> None:
    done = katib("-n", "a", "controller")  # the controller has --namespace, not -n
    assert done.code == 2 and done.err.startswith("katib-resume: error: -n does nothing for")


def test_every_command_has_a_typed_handler_and_no_handler_lacks_a_command() -> None:
    commands = next(
        action.choices
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    assert set(commands) == set(HANDLERS)


def test_parsing_any_embedded_command_imports_nothing_heavy() -> None:
    heavy = ("kubernetes", "pydantic", "yaml", "rich", "jsonpath", "grpc")
    ours = ("katib_resume.app.embedded", "katib_resume.adapters", "katib_resume.app.cli.get")
    probe = (
        "import sys; from katib_resume.app.cli.main import build_parser, hoist_flags\n"
        "parser = build_parser()\n"
        "for argv in (['-n', 'x', 'get', 'pvc,pv', '-l', 'a in (b)', '-o', 'jsonpath={.x}'],"
        " ['apply', '-f', 'e.yaml'], ['delete', 'pvc/x'], ['describe', 'pv']):\n"
        "    parser.parse_args(hoist_flags(argv, parser))\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r} "
        f"or m.startswith({ours!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "command",
    [
        ["get", "experiments"],
        ["get", "trials", "-o", "json"],
        ["describe", "experiment", NAME],
        ["edit", "experiment", NAME, "--max-trial-count", "14"],
    ],
)
def test_looking_and_editing_import_no_search_library(state: Path, command: list[str]) -> None:
    """``get``, ``describe`` and ``edit`` run no suggestion service, so a user waits for none of
    its imports (they made each of these commands about a second slower)."""
    assert imported_by([*command, "-n", NS, "--state-dir", str(state)]) == (0, [])


@pytest.mark.parametrize(
    ("command", "wanted"),
    [
        (["get", "experiments"], []),
        (["get", "trials", "-o", "json"], []),
        (["get", "experiments", "-o", "yaml"], ["yaml"]),
    ],
)
def test_getting_imports_no_model_library(
    state: Path, command: list[str], wanted: list[str]
) -> None:
    """``get`` reads and prints stored objects as they are: it parses no model, runs no
    lifecycle and writes YAML only when asked to (the probe sees an import when there is one)."""
    argv = [*command, "-n", NS, "--state-dir", str(state)]
    assert imported_by(argv, MODEL_LIBRARIES) == (0, wanted)
