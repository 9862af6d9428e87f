"""The install's pod webhook and what it relies on agree with the code that serves it.

Katib's names and selector, the path our server routes, the Service port, the controller's
service account the match condition skips, the webhook's permissions for the owner walk, and
the flags of both Deployments, parsed by our own command line.
"""

from __future__ import annotations

from typing import Any

from katib_resume.adapters.k8s.resources import RUN_KINDS, resource
from katib_resume.app.cli.main import build_parser
from katib_resume.app.manifests import names as n
from katib_resume.app.webhook import MUTATE_POD
from tests.unit.test_manifests import find, stream
from tests.unit.test_manifests_rbac import allows

NS = "team-ops"


def _pod_hook(docs: list[dict[str, Any]]) -> dict[str, Any]:
    config = find(docs, "MutatingWebhookConfiguration", "katib.kubeflow.org")
    [hook] = config["webhooks"]
    assert hook["name"] == "mutator.pod.katib.kubeflow.org"
    found: dict[str, Any] = hook
    return found


def test_katibs_pod_webhook_calls_our_service_on_the_routed_path() -> None:
    docs = stream(namespace=NS)
    hook, service = _pod_hook(docs), find(docs, "Service", n.WEBHOOK)
    assert hook["clientConfig"]["service"] == {
        "name": service["metadata"]["name"],
        "namespace": NS,
        "path": MUTATE_POD,
        "port": service["spec"]["ports"][0]["port"],
    }
    assert MUTATE_POD == "/mutate-pod"
    assert hook["rules"] == [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["pods"],
            "scope": "Namespaced",
        }
    ]
    assert (hook["failurePolicy"], hook["sideEffects"], hook["timeoutSeconds"]) == (
        "Fail",
        "None",
        10,
    )
    assert hook["admissionReviewVersions"] == ["v1"] and "objectSelector" not in hook


def test_only_labelled_namespaces_and_never_the_install_or_the_controller() -> None:
    docs = stream(namespace=NS)
    hook = _pod_hook(docs)
    assert hook["namespaceSelector"] == {
        "matchLabels": {"katib.kubeflow.org/metrics-collector-injection": "enabled"},
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [NS]}
        ],
    }
    [condition] = hook["matchConditions"]
    account = find(docs, "ServiceAccount", n.CONTROLLER)["metadata"]
    username = f"system:serviceaccount:{account['namespace']}:{account['name']}"
    assert condition["expression"] == f'request.userInfo.username != "{username}"'
    deployment = find(docs, "Deployment", n.CONTROLLER)
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == account["name"]


def test_the_webhook_may_read_every_object_of_the_owner_walk() -> None:
    docs = stream(namespace=NS)
    granted = find(docs, "ClusterRole", n.WEBHOOK)["rules"]
    kinds = [("kubeflow.org/v1beta1", k) for k in ("Trial", "Experiment", "Suggestion")]
    for api_version, kind in [*kinds, *RUN_KINDS]:
        group = api_version.rpartition("/")[0]
        assert allows(granted, group, resource(api_version, kind).plural, "get"), kind
    assert not any("pods" in rule["resources"] for rule in granted)


def test_both_deployments_parse_with_our_command_line_and_share_the_db_manager() -> None:
    docs = stream(namespace=NS, db_manager_address="db.katib:7000")
    parsed = {}
    for name in (n.CONTROLLER, n.WEBHOOK):
        [container] = find(docs, "Deployment", name)["spec"]["template"]["spec"]["containers"]
        parsed[name] = build_parser().parse_args(container["args"])
    controller, webhook = parsed[n.CONTROLLER], parsed[n.WEBHOOK]
    assert controller.run_trials and controller.leader_elect
    assert controller.db_manager_address == webhook.db_manager_address == "db.katib:7000"
    assert controller.config_map == webhook.config_map == (NS, "katib-config")
    assert webhook.cert_dir == n.CERT_DIR


def test_the_default_db_manager_is_katibs_service() -> None:
    [container] = find(stream(), "Deployment", n.WEBHOOK)["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[args.index("--db-manager-address") + 1] == "katib-db-manager.kubeflow:6789"
