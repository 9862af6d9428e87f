"""Katib's vocabulary in the code is the one docs/katib-contract.md quotes from Katib's sources.

Clients, dashboards and the SDK match these strings, so a changed one is a broken contract even
when every lifecycle still runs. The condition tables are read from the contract document row by
row (each row's short name is the notation of the sequences), so the document and the code cannot
drift apart; the other names, labels and ports are pinned to the values the document quotes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from katib_resume.core import addresses, katib, katib_trial
from katib_resume.core.conditions import ConditionSpec, Status

CONTRACT = (Path(__file__).resolve().parents[2] / "docs" / "katib-contract.md").read_text()
SR = katib.SuggestionReason


def _section(title: str) -> str:
    start = CONTRACT.index(f"\n{title}\n")
    end = CONTRACT.find("\n#", start + len(title) + 2)
    return CONTRACT[start:end]


def _cell(text: str) -> str:
    return text.strip().strip("`").removeprefix('"').removesuffix('"')


def _rows(title: str) -> dict[str, list[str]]:
    """The rows of a section's tables, by their first cell (``\\|`` is a literal bar)."""
    rows = {}
    for line in _section(title).splitlines():
        if line.startswith("| "):
            cells = [_cell(c).replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows[cells[0]] = cells[1:]
    return rows


def _spec(cells: list[str]) -> ConditionSpec:
    return ConditionSpec(cells[0], Status(cells[1]), cells[2], cells[3])


EXPERIMENT_ROWS = {
    "Cr": katib.EXP_CREATED,
    "Ru+": katib.EXP_RUNNING,
    "Rs": katib.EXP_RESTARTING,
    "SG": katib.EXP_GOAL_REACHED,
    "SM": katib.EXP_MAX_TRIALS,
    "SE": katib.EXP_SUGGESTION_END,
    "FM": katib.EXP_MAX_FAILED,
    "FS": katib.EXP_SUGGESTION_FAILED,
}
S_SUCCEEDED = (katib.SuggestionCondition.SUCCEEDED, Status.TRUE, SR.SUCCEEDED_BY_EXPERIMENT)
SUGGESTION_ROWS = {
    "C": katib.SUG_CREATED,
    "DR-": katib.SUG_DEPLOYMENT_NOT_READY,
    "DR+": katib.SUG_DEPLOYMENT_READY,
    "R+": katib.SUG_RUNNING,
    "R-s": katib.SUG_RUNNING_STOPPED,
    "DR-s": katib.SUG_DEPLOYMENT_STOPPED,
    "R-r": katib.SUG_RESTARTING,
    "S_N": ConditionSpec(*S_SUCCEEDED, katib.MSG_CANNOT_RESTART),
    "S_V": ConditionSpec(*S_SUCCEEDED, katib.MSG_CAN_RESTART_FROM_VOLUME),
}


@pytest.mark.parametrize("short", EXPERIMENT_ROWS)
def test_experiment_conditions_are_the_contracts_rows(short: str) -> None:
    assert EXPERIMENT_ROWS[short] == _spec(_rows("### Experiment conditions")[short])


@pytest.mark.parametrize("short", SUGGESTION_ROWS)
def test_suggestion_conditions_are_the_contracts_rows(short: str) -> None:
    assert SUGGESTION_ROWS[short] == _spec(_rows("### Suggestion conditions")[short])


def test_a_failed_suggestion_says_validation_failed_and_the_error() -> None:
    row = _rows("### Suggestion conditions")["F"]
    assert row[3] == 'Validation failed: " + the error'
    failed = katib.suggestion_failed("ValidateAlgorithmSettings Error: bad")
    text = "Validation failed: ValidateAlgorithmSettings Error: bad"
    assert failed == ConditionSpec("Failed", Status.TRUE, "SuggestionFailed", text)


def test_our_not_running_condition_is_the_contracts_row() -> None:
    """The running service's Deployment stopped being available (ours, no short name)."""
    spec = katib.SUG_NOT_RUNNING_NOT_READY
    row = f'| *ours* | `{spec.type}` | {spec.status} | `{spec.reason}` | "{spec.message}" |'
    assert row in _section("### Suggestion conditions")
    assert spec == ConditionSpec("Running", Status.FALSE, "DeploymentNotReady", SUG_NOT_RUNNING)


SUG_NOT_RUNNING = "Suggestion is not running"
OURS = {
    SR.FAILED_BY_EXPERIMENT: "Experiment is failed",
    SR.VOLUME_NOT_BOUND: "VolumeNotBound",
    SR.OWNERSHIP_CONFLICT: "OwnershipConflict",
    SR.VOLUME_TERMINATING: "VolumeTerminating",
    katib.MSG_VOLUME_KEPT_CANNOT_RESTART: (
        "Suggestion is succeeded, suggestion volume is not deleted, can't be restarted"
    ),
    katib.MSG_VOLUME_LOST: "Suggestion is succeeded, suggestion volume is lost",
    katib.MSG_VOLUME_LOST_CAN_RESTART: "can be restarted on a new volume without the saved state",
}


@pytest.mark.parametrize(("ours", "text"), OURS.items())
def test_our_suggestion_texts_are_the_documented_ones(ours: str, text: str) -> None:
    assert ours == text
    assert text in _section("### Suggestion conditions")


TRIAL_ROWS = {  # job status or "—", then the row's condition cell
    "Trial is created": ("CREATED", "Created True"),
    "Trial is running": ("RUNNING", "Running True"),
    "Trial has succeeded": ("SUCCEEDED", "Succeeded True"),
    "Metrics are not available": ("METRICS_UNAVAILABLE", "MetricsUnavailable True"),
    "Trial has failed": ("FAILED", "Failed True"),
    "Trial is early stopped": ("EARLY_STOPPED", "EarlyStopped True"),
}


@pytest.mark.parametrize("message", TRIAL_ROWS)
def test_trial_conditions_are_the_contracts_rows(message: str) -> None:
    member, condition = TRIAL_ROWS[message]
    rows = [line for line in _section("### Trial conditions").splitlines() if line.startswith("|")]
    (row,) = [r for r in rows if f'"{message}' in r]
    cells = [_cell(c) for c in row.split("|")[1:-1]]
    reason = cells[3].removesuffix(" + suffix").strip("`")
    assert cells[2].replace("`", "") == condition
    assert getattr(katib_trial.TrialMessage, member) == message
    assert getattr(katib_trial.TrialReason, member) == reason
    assert f"{getattr(katib_trial.TrialCondition, member)} True" == condition


def test_trial_constants_are_the_contracts() -> None:
    rows = _rows("### Trial constants")
    assert katib_trial.TRIAL_FINALIZER == rows["finalizer"][0] == "clean-metrics-in-db"
    assert rows["labels"][0] == f"{katib.LABEL_EXPERIMENT}`, `{katib_trial.LABEL_TRIAL}"
    assert katib_trial.UNAVAILABLE == rows["unavailable metric value"][0] == "unavailable"
    assert katib_trial.ZERO_TIME == "0001-01-01T00:00:00Z" in rows["zero time"][0]
    assert katib_trial.DEFAULT_TRIAL_RESOURCES == ("Job.v1.batch",)
    jobs = rows["default Job conditions"][0]
    success, failure = katib_trial.JOB_SUCCESS_CONDITION, katib_trial.JOB_FAILURE_CONDITION
    assert jobs == f"success `{success}`, failure `{failure}"
    assert katib_trial.TrialCondition.KILLED == "Killed"
    assert katib_trial.TrialReason.RUN_KIND_NOT_WATCHED == "RunKindNotWatched"
    events = katib_trial.JobEvent
    assert (events.CREATED, events.DELETED) == ("JobCreated", "JobDeleted")
    assert (events.RUNNING, events.SUCCEEDED, events.FAILED) == (
        "JobRunning",
        "JobSucceeded",
        "JobFailed",
    )
    assert events.METRICS_UNAVAILABLE == "MetricsUnavailable"


NAMES = {  # each value as the contract document quotes it (in backticks)
    katib.API_VERSION: "kubeflow.org/v1beta1",
    katib.GROUP: "kubeflow.org",
    katib.LABEL_EXPERIMENT: "katib.kubeflow.org/experiment",
    katib.LABEL_SUGGESTION: "katib.kubeflow.org/suggestion",
    katib.LABEL_DEPLOYMENT: "katib.kubeflow.org/deployment",
    katib.LABEL_ISTIO_INJECT: "sidecar.istio.io/inject",
    katib.NAMESPACE_INJECTION_LABEL: "katib.kubeflow.org/metrics-collector-injection",
    katib.SUGGESTION_PORT_NAME: "suggestion-api",
    katib.EARLY_STOPPING_PORT_NAME: "earlystop-api",
    katib.GRPC_HEALTH_SERVICE: "manager.v1beta1.Suggestion",
    katib.SUGGESTION_CONTAINER: "suggestion",
    katib.EARLY_STOPPING_CONTAINER: "early-stopping",
    katib.VOLUME_NAME: "suggestion-volume",
    katib.DEFAULT_MOUNT_PATH: "/opt/katib/data",
    katib.CONFIG_KEY: "katib-config.yaml",
    katib.CONFIG_API_VERSION: "config.kubeflow.org/v1beta1",
    katib.CONFIG_KIND: "KatibConfig",
    katib.DEFAULT_ACCESS_MODE: "ReadWriteOnce",
    katib.DEFAULT_STORAGE: "1Gi",
    katib.RECLAIM_POLICY_DELETE: "Delete",
    katib.DEFAULT_SUGGESTION_STORAGE_CLASS: "katib-suggestion",
    katib.DEFAULT_LOCAL_VOLUME_PATH_PREFIX: "/tmp/katib/suggestions",
    katib.FINALIZER_PV_CLEANUP: "resume.katib.kubeflow.org/pv-cleanup",
    katib.ANNOTATION_OWNER_UID: "resume.katib.kubeflow.org/owner-uid",
    katib.ANNOTATION_OWNER: "resume.katib.kubeflow.org/owner",
    katib.ANNOTATION_SEED: "resume.katib.kubeflow.org/seed",
    addresses.DB_MANAGER_ADDRESS: "katib-db-manager.kubeflow:6789",
}


@pytest.mark.parametrize(("value", "quoted"), NAMES.items(), ids=NAMES.values())
def test_names_labels_and_keys_are_the_contracts(value: str, quoted: str) -> None:
    assert value == quoted
    assert f"`{quoted}`" in CONTRACT


def test_ports_addresses_and_counts_are_the_contracts() -> None:
    ports = _rows("## Ports and addresses")
    assert katib.SUGGESTION_PORT == addresses.SUGGESTION_PORT == 6789
    assert katib.EARLY_STOPPING_PORT == addresses.EARLY_STOPPING_PORT == 6788
    where = {"service": "<s>-<algorithm>", "namespace": "<namespace>"}
    service = addresses.SUGGESTION_ENDPOINT.format(**where)
    early = addresses.EARLY_STOPPING_ENDPOINT.format(**where)
    assert ports["suggestion service"][0] == f"port `suggestion-api` 6789, at `{service}"
    assert ports["early-stopping service"][0] == f"port `earlystop-api` 6788, at `{early}"
    assert ports["*ours*: suggestion call deadline"][0].startswith("10 s a call")
    assert addresses.SUGGESTION_TIMEOUT == 10.0
    assert katib.DEFAULT_PARALLEL_TRIAL_COUNT == 3
    assert katib.LOCAL_VOLUME_LABELS == (("type", "local"),)
