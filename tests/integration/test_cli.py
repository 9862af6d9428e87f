"""The ``katib-resume`` command as a user runs it: a real process, real files, exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.harness import load, shipped_config_data

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
LONG_RUNNING = ROOT / "examples" / "long-running-resume.yaml"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "katib_resume", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


def example() -> dict[str, Any]:
    data: dict[str, Any] = load("from-volume-resume.yaml")
    return data


def test_plan_lists_what_the_controller_creates_for_from_volume() -> None:
    done = run("plan", "-f", EXAMPLE, "-o", "json")
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    assert listing["kind"] == "List"
    kinds = [(item["kind"], item["metadata"]["name"]) for item in listing["items"]]
    assert kinds == [
        ("Suggestion", "from-volume-resume"),
        ("PersistentVolumeClaim", "from-volume-resume-random"),
        ("Service", "from-volume-resume-random"),
        ("Deployment", "from-volume-resume-random"),
    ]


def test_plan_long_running_has_no_volume_and_yaml_is_the_default() -> None:
    done = run("plan", "-f", LONG_RUNNING)
    assert done.returncode == 0, done.stderr
    kinds = [item["kind"] for item in yaml.safe_load(done.stdout)["items"]]
    assert kinds == ["Suggestion", "Service", "Deployment"]


def test_plan_with_a_configured_pv(tmp_path: Path) -> None:
    config = shipped_config_data(
        persistentVolumeSpec={"hostPath": {"path": "/srv/katib"}, "capacity": {"storage": "1Gi"}}
    )
    done = run("plan", "-f", EXAMPLE, "--config", write(tmp_path, "c.yaml", config), "-o", "json")
    assert done.returncode == 0, done.stderr
    pv = json.loads(done.stdout)["items"][1]
    assert pv["kind"] == "PersistentVolume"
    assert pv["spec"]["hostPath"]["path"] == "/srv/katib/from-volume-resume-random-kubeflow"


def local_config(tmp_path: Path, **entry: Any) -> Path:
    """The shared katib-config with the ``random`` entry in the local volume mode."""
    claim = {"storageClassName": "katib-suggestion"}
    config = shipped_config_data(persistentVolumeClaimSpec=claim, **entry)
    return write(tmp_path, "local.yaml", config)


def test_plan_shows_the_local_volume_pre_bound_to_its_claim(tmp_path: Path) -> None:
    config = local_config(tmp_path, localVolumePathPrefix="/srv/katib")
    done = run("plan", "-f", EXAMPLE, "--config", config, "-o", "json")
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout)["items"]
    assert [item["kind"] for item in items] == [
        "Suggestion", "PersistentVolume", "PersistentVolumeClaim", "Service", "Deployment"
    ]  # fmt: skip
    pv, pvc = items[1], items[2]
    assert pv["metadata"]["name"] == "from-volume-resume-random-kubeflow"
    assert pv["metadata"]["labels"] == {"type": "local"}
    assert pv["spec"]["storageClassName"] == "katib-suggestion"
    assert pv["spec"]["hostPath"] == {
        "path": "/srv/katib/from-volume-resume-random-kubeflow",
        "type": "DirectoryOrCreate",
    }
    assert pv["spec"]["claimRef"]["name"] == pvc["metadata"]["name"]
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"]


def test_a_bad_prefix_is_bad_input(tmp_path: Path) -> None:
    done = run("plan", "-f", EXAMPLE, "--config", local_config(tmp_path, localVolumePathPrefix="x"))
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "localVolumePathPrefix: must be an absolute path without '..', got 'x'"
    )
    assert "Traceback" not in done.stderr


def test_validate_denies_a_stale_local_pv(tmp_path: Path) -> None:
    pv = "from-volume-resume-random-kubeflow"
    config = local_config(tmp_path)
    done = run("validate", "-f", EXAMPLE, "--config", config, "--existing-pv", pv)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"Cannot create the Experiment: from-volume-resume in namespace: kubeflow, PV: {pv} "
        "is not deleted"
    )
    assert run("validate", "-f", EXAMPLE, "--config", config, "--existing-pv", "x").returncode == 0


def test_validate_allows_the_example() -> None:
    done = run("validate", "-f", EXAMPLE)
    assert (done.returncode, done.stdout.strip()) == (
        0,
        "allowed: Experiment kubeflow/from-volume-resume",
    )


def test_validate_denies_a_stale_pv_with_katibs_message() -> None:
    done = run("validate", "-f", EXAMPLE, "--existing-pv", "from-volume-resume-random-kubeflow")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "Cannot create the Experiment: from-volume-resume in namespace: kubeflow, "
        "PV: from-volume-resume-random-kubeflow is not deleted"
    )


def test_validate_denies_restarting_a_never_experiment(tmp_path: Path) -> None:
    old = example()
    old["spec"]["resumePolicy"] = "Never"
    old["status"] = {
        "trials": 12,
        "conditions": [
            {"type": "Succeeded", "status": "True", "reason": "ExperimentMaxTrialsReached"}
        ],
    }
    new = example()
    new["spec"]["resumePolicy"] = "Never"
    new["spec"]["maxTrialCount"] = 20
    done = run(
        "validate", "-f", write(tmp_path, "n.yaml", new), "--old", write(tmp_path, "o.yaml", old)
    )
    assert done.returncode == 1
    assert (
        "Experiment can be restarted if it is in succeeded state by reaching max trials"
        in done.stderr
    )


def test_diagram_prints_mermaid() -> None:
    done = run("diagram", "suggestion")
    assert done.returncode == 0
    assert "stateDiagram-v2" in done.stdout
    assert "Succeeded --> Restarting: restart_requested [is_volume_kept]" in done.stdout


BAD_CONFIG_QUANTITY = """\
apiVersion: config.kubeflow.org/v1beta1
kind: KatibConfig
runtime:
  suggestions:
    - algorithmName: random
      image: x
      resources:
        limits:
          cpu: lots
"""


@pytest.mark.parametrize(
    ("files", "needle"),
    [
        ({}, "missing.yaml: cannot read: No such file or directory"),
        ({"e.yaml": "a: [1, 2"}, "e.yaml: invalid YAML"),
        ({"e.yaml": "- 1\n- 2\n"}, "e.yaml: expected a mapping (an Experiment), found list"),
        ({"e.yaml": {"apiVersion": "v1", "kind": "Pod"}}, "e.yaml: expected kind Experiment"),
        ({"e.yaml": "---\na: 1\n---\nb: 2\n"}, "e.yaml: expected one YAML document, found 2"),
        ({"c.yaml": BAD_CONFIG_QUANTITY}, "c.yaml: runtime.suggestions[0].resources.limits.cpu"),
    ],
    ids=["unreadable", "invalid-yaml", "not-a-mapping", "wrong-kind", "two-documents", "quantity"],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, files: dict[str, Any], needle: str
) -> None:
    for name, content in files.items():
        write(tmp_path, name, content)
    experiment = tmp_path / ("e.yaml" if "e.yaml" in files else "missing.yaml")
    if "c.yaml" in files:
        experiment = EXAMPLE
    args: list[str | Path] = ["plan", "-f", experiment]
    if "c.yaml" in files:
        args += ["--config", tmp_path / "c.yaml"]
    done = run(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert needle in done.stderr


def test_unknown_algorithm_is_bad_input(tmp_path: Path) -> None:
    data = example()
    data["spec"]["algorithm"]["algorithmName"] = "simulated-annealing"
    done = run("plan", "-f", write(tmp_path, "e.yaml", data))
    assert done.returncode == 2
    assert "failed to find suggestion config for algorithm: simulated-annealing" in done.stderr


def test_an_invalid_field_type_names_the_field(tmp_path: Path) -> None:
    data = example()
    data["spec"]["maxTrialCount"] = "many"
    done = run("plan", "-f", write(tmp_path, "e.yaml", data))
    assert done.returncode == 2
    assert "e.yaml: spec.maxTrialCount:" in done.stderr


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path: Path) -> None:
    """``katib-resume demo | head -1``: the pipe closes while the command still writes."""
    process = subprocess.Popen(
        [sys.executable, "-m", "katib_resume", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()
    error = process.stderr.read()
    assert process.wait(60) in (0, 141)
    assert "Traceback" not in error


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (["--suggestion-endpoint", "{svc}.{namespace}:6789"], "unknown placeholder {svc}"),
        (["--early-stopping-endpoint", "{service"], "invalid endpoint template '{service'"),
        (["--suggestion-timeout", "0"], "must be a positive number of seconds, got 0"),
        (["--suggestion-timeout", "soon"], "expected a number of seconds, got 'soon'"),
    ],
)
def test_the_controller_refuses_bad_suggestion_flags_in_one_line(
    flags: list[str], error: str
) -> None:
    done = run("controller", "--kubeconfig", "/nonexistent", *flags)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and error in done.stderr
