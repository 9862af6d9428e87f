"""The embedded commands as a user runs them: real processes over a state directory.

One module-scoped run of Katib's from-volume example (``run -f``) is copied into each test's own
state directory, so every test starts from a completed 12-trial Experiment without paying for
the run again, and no test sees another's changes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.app.common.output import human_duration, table
from tests.support.harness import shipped_config_data
from tests.support.state_dir import committed

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
NAME, NS = "from-volume-resume", "kubeflow"
PVC_NAME = "from-volume-resume-random"


def cli(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "katib_resume", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, check=False)


def ok(*args: str | Path) -> str:
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def as_json(*args: str | Path) -> Any:
    return json.loads(ok(*args, "-o", "json"))


@pytest.fixture(scope="module")
def completed(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    state = tmp_path_factory.mktemp("completed") / "state"
    done = cli("run", "-f", EXAMPLE, "--state-dir", state)
    assert done.returncode == 0, done.stderr
    return state, done


@pytest.fixture
def state(completed: tuple[Path, Any], tmp_path: Path) -> Path:
    copy = tmp_path / "state"
    shutil.copytree(completed[0], copy, ignore=shutil.ignore_patterns(".lock"))
    return copy


def test_run_completes_the_example_with_12_trials(completed: tuple[Path, Any]) -> None:
    _, done = completed
    rows = [line for line in done.stdout.splitlines() if line.startswith(f"{NAME}-")]
    assert len(rows) == 12
    assert all(row.split()[-1] == "Succeeded" for row in rows)
    assert done.stdout.splitlines()[0].split() == ["TRIAL", "LR", "MOMENTUM", "LOSS", "STATUS"]
    assert done.stdout.strip().endswith(
        f"Experiment {NS}/{NAME}: Succeeded=True (ExperimentMaxTrialsReached): "
        "Experiment has succeeded because max trial count has reached"
    )
    assert f"{NS}/{NAME}: 12/12 trials completed" in done.stderr  # plain progress: not a tty


@pytest.mark.parametrize(
    ("kind", "header"),
    [
        ("experiments", "NAME TYPE STATUS AGE"),
        ("exp", "NAME TYPE STATUS AGE"),
        ("suggestion", "NAME TYPE STATUS REQUESTED ASSIGNED AGE"),
        ("trials", "NAME TYPE STATUS AGE"),
        ("pvc", "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS AGE"),
        ("pv", "NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS AGE"),
        ("events", "LAST SEEN TYPE REASON OBJECT MESSAGE"),
    ],
)
def test_get_prints_kubectl_tables(state: Path, kind: str, header: str) -> None:
    lines = ok("get", kind, "-n", NS, "--state-dir", state).splitlines()
    assert " ".join(lines[0].split()) == header
    assert len(lines) > 1


def test_get_shows_katibs_printer_columns(state: Path) -> None:
    experiment = ok("get", "experiments", "-n", NS, "--state-dir", state).splitlines()[1].split()
    assert experiment[:3] == [NAME, "Succeeded", "True"]
    suggestion = ok("get", "suggestions", NAME, "-n", NS, "--state-dir", state).splitlines()[1]
    assert suggestion.split()[:5] == [NAME, "Succeeded", "True", "12", "12"]
    pvc = ok("get", "pvc", "-n", NS, "--state-dir", state).splitlines()[1].split()
    assert pvc[:2] == [PVC_NAME, "Bound"]
    wide = ok("get", "trials", "-n", NS, "-o", "wide", "--state-dir", state).splitlines()
    assert "ASSIGNMENTS" in wide[0] and "lr=" in wide[1] and "momentum=" in wide[1]


def test_released_service_objects_are_not_found(state: Path) -> None:
    for kind in ("deployments", "deploy", "services", "svc"):
        done = cli("get", kind, "-n", NS, "--state-dir", state)
        assert (done.returncode, done.stdout) == (0, "")
        assert done.stderr.strip() == f"No resources found in {NS} namespace."


def test_json_is_a_list_without_name_and_one_object_with_it(state: Path) -> None:
    trials = as_json("get", "trials", "-n", NS, "--state-dir", state)
    assert (trials["apiVersion"], trials["kind"], len(trials["items"])) == ("v1", "List", 12)
    assert all(len(t["spec"]["parameterAssignments"]) == 2 for t in trials["items"])
    one = as_json("get", "experiment", NAME, "-n", NS, "--state-dir", state)
    assert (one["kind"], one["spec"]["maxTrialCount"]) == ("Experiment", 12)
    events = as_json("get", "events", "-n", NS, "--state-dir", state)
    assert events["kind"] == "List"
    assert {e["kind"] for e in events["items"]} == {"Event"}
    listing = yaml.safe_load(ok("get", "pv", "-o", "yaml", "--state-dir", state))
    assert listing["kind"] == "List" and len(listing["items"]) == 1
    pvc = yaml.safe_load(ok("get", "pvc", PVC_NAME, "-n", NS, "-o", "yaml", "--state-dir", state))
    assert pvc["kind"] == "PersistentVolumeClaim"


def test_flags_after_the_command_in_any_order(state: Path) -> None:
    pvcs = as_json("get", "pvc", "-n", NS, "--state-dir", state)
    assert [p["metadata"]["name"] for p in pvcs["items"]] == [PVC_NAME]
    everywhere = ok("get", "exp", "-A", "--state-dir", state).splitlines()
    assert everywhere[0].split()[:2] == ["NAMESPACE", "NAME"]


def test_default_namespace_is_default_and_the_error_points_at_the_right_one(state: Path) -> None:
    done = cli("get", "exp", "--state-dir", state)
    assert (done.returncode, done.stderr.strip()) == (0, "No resources found in default namespace.")
    missing = cli("get", "exp", NAME, "--state-dir", state)
    assert missing.returncode == 1  # kubectl's status for NotFound
    assert missing.stderr.strip() == (
        f'Error from server (NotFound): experiments.kubeflow.org "{NAME}" not found '
        f"(it exists in namespace {NS}: add -n {NS})"
    )


def test_describe_merges_conditions_and_events_in_time_order(state: Path) -> None:
    text = ok("describe", "experiment", NAME, "-n", NS, "--state-dir", state)
    assert "Resume policy: FromVolume" in text
    assert "Objective:     minimize loss (goal 0.001)" in text
    assert "Trials:        12 (12 succeeded" in text
    timeline = text.split("Timeline:\n", 1)[1].splitlines()[1:]
    times = [line.split()[0] for line in timeline]
    assert times == sorted(times)
    sources = {line.split()[2] for line in timeline}
    assert sources == {"condition", "event"}
    assert any("MaxTrialsReached" in line for line in timeline)
    suggestion = ok("describe", "suggestion", NAME, "-n", NS, "--state-dir", state)
    assert f"PersistentVolumeClaim: {PVC_NAME} (UID " in suggestion
    assert "Deployment:            from-volume-resume-random: none" in suggestion


def test_edit_below_the_trial_count_is_denied_with_katibs_message(state: Path) -> None:
    before = committed(state)
    done = cli("edit", "experiment", NAME, "-n", NS, "--max-trial-count", "5", "--state-dir", state)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "spec.maxTrialCount: Invalid value: 5: must be greater than status.trials count"
    )
    assert committed(state) == before


def test_edit_of_a_completed_never_experiment_is_denied(tmp_path: Path) -> None:
    never = yaml.safe_load(EXAMPLE.read_text())
    never["spec"]["resumePolicy"] = "Never"
    path = tmp_path / "never.yaml"
    path.write_text(yaml.safe_dump(never))
    ok("run", "-f", path, "--state-dir", tmp_path / "s")
    done = cli(
        "edit", "exp", NAME, "-n", NS, "--max-trial-count", "20", "--state-dir", tmp_path / "s"
    )
    assert done.returncode == 1
    assert done.stderr.startswith('spec.resumePolicy: Invalid value: "Never": Experiment can be')
    assert len(done.stderr.strip().splitlines()) == 1


def test_dry_run_changes_nothing_and_reports_the_reused_volume(state: Path) -> None:
    files = {p: p.read_bytes() for p in state.rglob("*") if p.is_file() and p.name != ".lock"}
    pvc_uid = as_json("get", "pvc", PVC_NAME, "-n", NS, "--state-dir", state)["metadata"]["uid"]
    text = ok(
        "edit", "experiment", NAME, "-n", NS, "--max-trial-count", "20", "--dry-run",
        "--state-dir", state,
    )  # fmt: skip
    after = {p: p.read_bytes() for p in state.rglob("*") if p.is_file() and p.name != ".lock"}
    assert after == files
    assert f"PersistentVolumeClaim {PVC_NAME}: reused, same UID {pvc_uid}" in text
    assert f"Deployment {PVC_NAME}: comes back (new UID" in text
    assert f"Service {PVC_NAME}: comes back (new UID" in text
    assert "(12 assignments)" in text and str(state.resolve()) in text
    assert (
        as_json("get", "exp", NAME, "-n", NS, "--state-dir", state)["spec"]["maxTrialCount"] == 12
    )


def test_edit_then_run_resumes_to_20_trials_on_the_same_pvc(state: Path) -> None:
    pvc_uid = as_json("get", "pvc", PVC_NAME, "-n", NS, "--state-dir", state)["metadata"]["uid"]
    first = _assignments(state)
    edited = ok(
        "edit", "experiment", NAME, "-n", NS, "--max-trial-count", "20", "--state-dir", state
    )
    assert edited.splitlines() == [
        f"experiment.kubeflow.org/{NAME} edited (maxTrialCount 12 -> 20)",
        f"Experiment restarts: run `katib-resume run {NAME} -n {NS}`",
    ]
    done = cli("run", NAME, "-n", NS, "--state-dir", state)
    assert done.returncode == 0, done.stderr
    assert sum(line.startswith(f"{NAME}-") for line in done.stdout.splitlines()) == 20
    assert f"{NS}/{NAME}: 20/20 trials completed" in done.stderr
    assert as_json("get", "pvc", PVC_NAME, "-n", NS, "--state-dir", state)["metadata"]["uid"] == (
        pvc_uid
    )
    resumed = _assignments(state)
    assert len(resumed) == 20 and resumed[:12] == first
    events = as_json("get", "events", NAME, "-n", NS, "--state-dir", state)["items"]
    restored = [e["message"] for e in events if e["reason"] == "SuggestionStateRestored"]
    assert len(restored) == 1 and restored[0].endswith("(12 assignments)")


def test_delete_removes_everything_including_the_volume(state: Path) -> None:
    volumes = state / "volumes" / "host" / "tmp" / "katib" / "suggestions"
    assert [path.name for path in volumes.iterdir()] == [f"{PVC_NAME}-{NS}"]
    text = ok("delete", "experiment", NAME, "-n", NS, "--state-dir", state)
    assert f"removed PersistentVolumeClaim {PVC_NAME}" in text
    assert "removed 12 Trials" in text and "removed volume directory" in text
    assert as_json("get", "pvc", "-n", NS, "--state-dir", state)["items"] == []
    assert as_json("get", "pv", "--state-dir", state)["items"] == []
    assert not any(volumes.iterdir())


def test_run_of_an_existing_experiment_points_at_run_name(state: Path) -> None:
    done = cli("run", "-f", EXAMPLE, "--state-dir", state)
    assert done.returncode == 2
    assert f'experiment "{NAME}" already exists in namespace "{NS}"' in done.stderr
    assert f"use `katib-resume run {NAME} -n {NS}` or `edit`" in done.stderr


def test_the_default_state_directory_is_in_the_working_directory(tmp_path: Path) -> None:
    done = cli("run", "-f", EXAMPLE, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".katib-resume" / "cluster.db").is_file()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "-f", "missing.yaml"], "missing.yaml: cannot read"),
        (["run", "-f", "bad.yaml"], "bad.yaml: invalid YAML"),
        (["run", "-f", "pod.yaml"], "pod.yaml: expected kind Experiment"),
        (["run"], "run needs either -f EXPERIMENT.yaml (create) or NAME (continue)"),
        (["get", "widgets"], "unknown kind 'widgets'"),
        (["describe", "widget", "x"], "unknown kind 'widget'"),
        (["edit", "exp", NAME, "--max-trial-count", "many"], "expected a whole number, got 'many'"),
        (["edit", "exp", NAME, "--max-trial-count", "0"], "must be at least 1, got 0"),
        (["edit", "exp", NAME, "-n", NS], "nothing to edit"),
        (["get", "pvc", "-o", "xml"], "argument -o/--output: invalid choice: 'xml'"),
        (["run", NAME, "--seed", "x"], "argument --seed: expected a whole number"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    state: Path, tmp_path: Path, args: list[str], needle: str
) -> None:
    (tmp_path / "bad.yaml").write_text("a: [1, 2")
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\n")
    done = cli(
        *(str(tmp_path / a) if a.endswith(".yaml") else a for a in args), "--state-dir", state
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("katib-resume: error: ")
    assert needle in done.stderr


def test_a_missing_state_directory_is_not_created_by_a_failed_command(tmp_path: Path) -> None:
    for args in (["edit", "exp", NAME, "--max-trial-count", "3"], ["get", "pv"]):
        cli(*args, "--state-dir", tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists()


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (5, "5s"),
        (119, "119s"),
        (125, "2m5s"),
        (600, "10m"),
        (3 * 3600 + 60, "3h1m"),
        (50 * 3600, "2d2h"),
    ],
)
def test_ages_read_like_kubectls(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def test_tables_align_columns_and_never_pad_the_last() -> None:
    assert table(["A", "LONGER"], [["xyz", "1"]]) == "A     LONGER\nxyz   1\n"


def _assignments(state: Path) -> list[list[tuple[str, str]]]:
    suggestion = as_json("get", "suggestion", NAME, "-n", NS, "--state-dir", state)
    return [
        [(p["name"], p["value"]) for p in entry["parameterAssignments"]]
        for entry in suggestion["status"]["suggestions"]
    ]


def katib_config(tmp_path: Path, **random: Any) -> Path:
    """Katib's shipped katib-config with ``random``'s entry extended by ``random``."""
    path = tmp_path / "katib-config.yaml"
    path.write_text(yaml.safe_dump(shipped_config_data(**random)))
    return path


def test_a_run_that_cannot_complete_gives_up_with_where_it_is_stuck(tmp_path: Path) -> None:
    claim = {"storageClassName": "no-such-class", "accessModes": ["ReadWriteOnce"]}
    path = katib_config(tmp_path, persistentVolumeClaimSpec=claim)
    done = cli("run", "-f", EXAMPLE, "--config", path, "--state-dir", tmp_path / "s")
    assert done.returncode == 2
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("katib-resume: error: gave up waiting for Experiment kubeflow/")
    assert "nothing changed for 3600 simulated seconds" in error
    assert "Suggestion DeploymentReady=False (VolumeNotBound)" in error


def test_a_configured_pv_goes_with_the_experiment_so_run_is_admitted_again(tmp_path: Path) -> None:
    volume = {"hostPath": {"path": "/srv/katib"}, "capacity": {"storage": "1Gi"}}
    path = katib_config(tmp_path, persistentVolumeSpec=volume)
    state = tmp_path / "s"
    ok("run", "-f", EXAMPLE, "--config", path, "--state-dir", state)
    assert [p["metadata"]["name"] for p in as_json("get", "pv", "--state-dir", state)["items"]] == [
        "from-volume-resume-random-kubeflow"
    ]
    removed = ok("delete", "experiment", NAME, "-n", NS, "--state-dir", state)
    assert "removed PersistentVolume from-volume-resume-random-kubeflow" in removed
    assert "kept volume directory" in removed  # a static hostPath outside /tmp/ keeps its data
    again = cli("run", "-f", EXAMPLE, "--state-dir", state)
    assert again.returncode == 0, again.stderr  # our finalizer deleted the PV: nothing left over


def test_a_new_state_directory_keeps_the_local_volume_config(state: Path) -> None:
    stored = yaml.safe_load((state / "katib-config.yaml").read_text())
    claims = [entry["persistentVolumeClaimSpec"] for entry in stored["runtime"]["suggestions"]]
    assert all(claim["storageClassName"] == "katib-suggestion" for claim in claims)
    (pv,) = as_json("get", "pv", "--state-dir", state)["items"]
    assert pv["metadata"]["name"] == f"{PVC_NAME}-{NS}"
    assert pv["metadata"]["labels"] == {"type": "local"}
    assert pv["spec"]["hostPath"]["path"] == f"/tmp/katib/suggestions/{PVC_NAME}-{NS}"


def test_a_state_directory_from_before_the_mode_keeps_katibs_config(tmp_path: Path) -> None:
    state = tmp_path / "s"
    shipped = ROOT / "app" / "data" / "katib-config.yaml"
    ok("run", "-f", EXAMPLE, "--config", shipped, "--state-dir", state)
    (state / "katib-config.yaml").unlink()  # as a state directory made before the mode
    ok("edit", "experiment", NAME, "-n", NS, "--max-trial-count", "15", "--state-dir", state)
    ok("run", NAME, "-n", NS, "--state-dir", state)  # resumes on its provisioned volume
    (pv,) = as_json("get", "pv", "--state-dir", state)["items"]
    assert pv["metadata"]["name"].startswith("pvc-")
    assert not (state / "katib-config.yaml").exists()
