"""Katib's vocabulary, quoted exactly: clients, dashboards and the SDK read these strings.

Names, label keys, ports and the condition types, reasons and messages of Experiments and
Suggestions (docs/katib-contract.md#objects, docs/katib-contract.md#suggestion-conditions,
docs/katib-contract.md#experiment-sequences, docs/katib-contract.md#names,
docs/katib-contract.md#constants). The few additions of katib-resume (the truthful messages that fix
Katib bugs 10 and 16, the ownership conflict, our finalizer and annotation) are marked as ours.
"""

from __future__ import annotations

from typing import Final

from katib_resume.core import addresses
from katib_resume.core.condition_spec import ConditionSpec, Status

API_VERSION: Final = "kubeflow.org/v1beta1"
GROUP = "kubeflow.org"

# Labels (docs/katib-contract.md#labels).
LABEL_EXPERIMENT = "katib.kubeflow.org/experiment"
LABEL_SUGGESTION = "katib.kubeflow.org/suggestion"
LABEL_DEPLOYMENT = "katib.kubeflow.org/deployment"
LABEL_ISTIO_INJECT = "sidecar.istio.io/inject"
NAMESPACE_INJECTION_LABEL = "katib.kubeflow.org/metrics-collector-injection"

# The suggestion service (docs/katib-contract.md#suggestion-pod).
SUGGESTION_PORT_NAME = "suggestion-api"
SUGGESTION_PORT = addresses.SUGGESTION_PORT
EARLY_STOPPING_PORT_NAME = "earlystop-api"
EARLY_STOPPING_PORT = addresses.EARLY_STOPPING_PORT
GRPC_HEALTH_SERVICE = "manager.v1beta1.Suggestion"
SUGGESTION_CONTAINER = "suggestion"
EARLY_STOPPING_CONTAINER = "early-stopping"
VOLUME_NAME = "suggestion-volume"
DEFAULT_MOUNT_PATH = "/opt/katib/data"
DEFAULT_PARALLEL_TRIAL_COUNT = 3

# The katib-config and the volume defaults it applies (docs/katib-contract.md#volumes,
# docs/katib-contract.md#katib-config, docs/katib-contract.md#constants). Its name, CONFIG_MAP_NAME
# ("katib-config"), is in core.names: light enough for --help.
CONFIG_KEY = "katib-config.yaml"
CONFIG_API_VERSION = "config.kubeflow.org/v1beta1"
CONFIG_KIND = "KatibConfig"
DEFAULT_ACCESS_MODE = "ReadWriteOnce"
DEFAULT_STORAGE = "1Gi"
RECLAIM_POLICY_DELETE = "Delete"

# The seed design's local volume mode (docs/katib-contract.md#local-volumes: #1275 until #1552; ours
# again, issue 5).
DEFAULT_SUGGESTION_STORAGE_CLASS = "katib-suggestion"
DEFAULT_LOCAL_VOLUME_PATH_PREFIX = "/tmp/katib/suggestions"
LOCAL_VOLUME_LABELS = (("type", "local"),)

# Ours: cleanup of the cluster-scoped PV, and its ownership record.
FINALIZER_PV_CLEANUP = "resume.katib.kubeflow.org/pv-cleanup"
ANNOTATION_OWNER_UID = "resume.katib.kubeflow.org/owner-uid"
ANNOTATION_OWNER = "resume.katib.kubeflow.org/owner"
ANNOTATION_SEED = "resume.katib.kubeflow.org/seed"  # the embedded runtime's search seed


class ExperimentCondition:
    """Experiment condition types (docs/katib-contract.md#experiment-conditions)."""

    CREATED = "Created"
    RUNNING = "Running"
    RESTARTING = "Restarting"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


class ExperimentReason:
    CREATED = "ExperimentCreated"
    RUNNING = "ExperimentRunning"
    RESTARTING = "ExperimentRestarting"
    GOAL_REACHED = "ExperimentGoalReached"
    MAX_TRIALS_REACHED = "ExperimentMaxTrialsReached"
    SUGGESTION_END_REACHED = "ExperimentSuggestionEndReached"
    FAILED = "ExperimentFailed"


class SuggestionCondition:
    """Suggestion condition types (docs/katib-contract.md#suggestion-conditions)."""

    CREATED = "Created"
    DEPLOYMENT_READY = "DeploymentReady"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


class SuggestionReason:
    CREATED = "SuggestionCreated"
    DEPLOYMENT_NOT_READY = "DeploymentNotReady"
    DEPLOYMENT_READY = "DeploymentReady"
    RUNNING = "SuggestionRunning"
    FAILED = "SuggestionFailed"
    SUCCEEDED_BY_EXPERIMENT = "Experiment is succeeded"
    FAILED_BY_EXPERIMENT = "Experiment is failed"  # ours: Katib says "succeeded" (bug 10)
    SUGGESTION_SUCCEEDED = "Suggestion is succeeded"
    RESTARTING = "Experiment is restarting"
    VOLUME_NOT_BOUND = "VolumeNotBound"  # ours: bug 16
    OWNERSHIP_CONFLICT = "OwnershipConflict"  # ours: never adopt another's PV or PVC
    VOLUME_TERMINATING = "VolumeTerminating"  # ours: the claim is deleted under the service


T, F = Status.TRUE, Status.FALSE
E, S = ExperimentCondition, SuggestionCondition
ER, SR = ExperimentReason, SuggestionReason

# Experiment conditions (docs/katib-contract.md#experiment-conditions,
# docs/katib-contract.md#experiment-sequences).
EXP_CREATED = ConditionSpec(E.CREATED, T, ER.CREATED, "Experiment is created")
EXP_RUNNING = ConditionSpec(E.RUNNING, T, ER.RUNNING, "Experiment is running")
EXP_RESTARTING = ConditionSpec(E.RESTARTING, T, ER.RESTARTING, "Experiment is restarted")
EXP_GOAL_REACHED = ConditionSpec(
    E.SUCCEEDED, T, ER.GOAL_REACHED, "Experiment has succeeded because Objective goal has reached"
)
EXP_MAX_TRIALS = ConditionSpec(
    E.SUCCEEDED,
    T,
    ER.MAX_TRIALS_REACHED,
    "Experiment has succeeded because max trial count has reached",
)
EXP_MAX_FAILED = ConditionSpec(
    E.FAILED, T, ER.FAILED, "Experiment has failed because max failed count has reached"
)
EXP_SUGGESTION_FAILED = ConditionSpec(E.FAILED, T, ER.FAILED, "Suggestion has failed")
EXP_SUGGESTION_END = ConditionSpec(
    E.SUCCEEDED,
    T,
    ER.SUGGESTION_END_REACHED,
    "Experiment has succeeded because suggestion service has reached the end",
)

# Suggestion conditions (docs/katib-contract.md#suggestion-conditions notation in the comments).
SUG_CREATED = ConditionSpec(S.CREATED, T, SR.CREATED, "Suggestion is created")  # C
SUG_DEPLOYMENT_NOT_READY = ConditionSpec(  # DR-
    S.DEPLOYMENT_READY, F, SR.DEPLOYMENT_NOT_READY, "Deployment is not ready"
)
SUG_DEPLOYMENT_READY = ConditionSpec(  # DR+
    S.DEPLOYMENT_READY, T, SR.DEPLOYMENT_READY, "Deployment is ready"
)
SUG_RUNNING = ConditionSpec(S.RUNNING, T, SR.RUNNING, "Suggestion is running")  # R+
SUG_RESTARTING = ConditionSpec(  # R-r
    S.RUNNING, F, SR.RESTARTING, "Suggestion is not running"
)
SUG_NOT_RUNNING_NOT_READY = ConditionSpec(  # ours: the deployment stopped being available
    S.RUNNING, F, SR.DEPLOYMENT_NOT_READY, "Suggestion is not running"
)
SUG_RUNNING_STOPPED = ConditionSpec(  # R-s
    S.RUNNING, F, SR.SUGGESTION_SUCCEEDED, "Suggestion is not running"
)
SUG_DEPLOYMENT_STOPPED = ConditionSpec(  # DR-s
    S.DEPLOYMENT_READY, F, SR.SUGGESTION_SUCCEEDED, "Deployment is not ready"
)
MSG_CANNOT_RESTART = "Suggestion is succeeded, can't be restarted"  # S_N
MSG_CAN_RESTART_FROM_VOLUME = (  # S_V
    "Suggestion is succeeded, suggestion volume is not deleted, can be restarted"
)
MSG_VOLUME_KEPT_CANNOT_RESTART = (  # ours: truthful for a non-restartable FromVolume completion
    "Suggestion is succeeded, suggestion volume is not deleted, can't be restarted"
)
MSG_VOLUME_LOST = "Suggestion is succeeded, suggestion volume is lost"  # ours, then "(<why>), ..."
MSG_VOLUME_LOST_CAN_RESTART = "can be restarted on a new volume without the saved state"
MSG_VALIDATION_FAILED = "Validation failed: "


def suggestion_failed(error: str) -> ConditionSpec:
    """``Failed`` with Katib's "Validation failed: <error>" message."""
    return ConditionSpec(S.FAILED, T, SR.FAILED, MSG_VALIDATION_FAILED + error)
