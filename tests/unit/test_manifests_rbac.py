"""The RBAC objects grant what the permission tables say, and the tables what the code needs."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from katib_resume.app.manifests import Options, generate, render
from katib_resume.app.manifests import names as n
from katib_resume.app.manifests.rbac import CONTROLLER_CLUSTER, TABLES, Permission
from katib_resume.core.model import Suggestion
from katib_resume.core.resources import desired_rbac

SHIPPED = "apiVersion: config.kubeflow.org/v1beta1\nkind: KatibConfig\n"
NAMESPACE = "team-ops"

CONTROLLER_WRITES = [
    ("kubeflow.org", resource, verb)
    for resource in ("suggestions", "trials")
    for verb in ("get", "list", "watch", "create", "delete")
] + [
    (group, resource, verb)
    for group, resource in [
        ("apps", "deployments"),
        ("", "services"),
        ("", "persistentvolumeclaims"),
        ("", "persistentvolumes"),
        ("", "serviceaccounts"),
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "rolebindings"),
    ]
    for verb in ("get", "list", "watch", "create", "delete")
]
"""The kinds the planner creates and deletes (``core.plan``), read through watches."""

CONTROLLER_SPEC = [
    ("kubeflow.org", "suggestions", "update"),
    ("kubeflow.org", "experiments/status", "update"),
    ("kubeflow.org", "suggestions/status", "update"),
    ("kubeflow.org", "experiments/finalizers", "update"),
    ("kubeflow.org", "suggestions/finalizers", "update"),
    ("", "events", "create"),
    ("events.k8s.io", "events", "create"),
    # adapters.k8s writes every update as a merge patch guarded by resourceVersion
    ("kubeflow.org", "suggestions", "patch"),
    ("kubeflow.org", "experiments/status", "patch"),
    ("kubeflow.org", "suggestions/status", "patch"),
]
"""The Suggestion's spec (``requests``), status writes, finalizers (ours on the Suggestion, and
``blockOwnerDeletion`` owner references), Events through either API."""


def documents() -> list[dict[str, Any]]:
    options = Options(katib_config=SHIPPED, image="i:1", namespace=NAMESPACE)
    return list(yaml.safe_load_all(render(generate(options))))


def rules(kind: str, name: str) -> list[dict[str, Any]]:
    [role] = [d for d in documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    assert role["metadata"].get("namespace") == (NAMESPACE if kind == "Role" else None)
    found: list[dict[str, Any]] = role["rules"]
    return found


def allows(granted: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(
        group in rule["apiGroups"]
        and resource in rule["resources"]
        and (verb in rule["verbs"] or "*" in rule["verbs"])
        for rule in granted
    )


def triples(table: tuple[Permission, ...]) -> list[tuple[str, str, str]]:
    return [(p.group, r, v) for p in table for r in p.resources for v in p.verbs]


@pytest.mark.parametrize("identity", sorted(TABLES))
def test_the_roles_grant_exactly_the_tables(identity: str) -> None:
    cluster, namespaced = TABLES[identity]
    for kind, table in (("ClusterRole", cluster), ("Role", namespaced)):
        granted = rules(kind, identity)
        assert all(allows(granted, *need) for need in triples(table))
        assert len(granted) == len(table)


@pytest.mark.parametrize("need", CONTROLLER_WRITES + CONTROLLER_SPEC)
def test_the_controller_may_do_what_the_planner_asks(need: tuple[str, str, str]) -> None:
    assert allows(rules("ClusterRole", n.CONTROLLER), *need)


@pytest.mark.parametrize(
    "need",
    [("", "configmaps", v) for v in ("get", "list", "watch")]
    + [("coordination.k8s.io", "leases", v) for v in ("get", "create", "update", "patch")],
)
def test_config_and_lease_only_in_the_install_namespace(need: tuple[str, str, str]) -> None:
    assert allows(rules("Role", n.CONTROLLER), *need)
    assert not allows(rules("ClusterRole", n.CONTROLLER), *need)


def test_the_controller_holds_what_the_early_stopping_role_grants() -> None:
    """Kubernetes refuses to let a subject create a Role granting more than it holds."""
    suggestion = Suggestion.model_validate(
        {
            "apiVersion": "kubeflow.org/v1beta1",
            "kind": "Suggestion",
            "metadata": {"name": "s", "namespace": "team-a"},
            "spec": {"algorithm": {"algorithmName": "random"}},
        }
    )
    _, role, _ = desired_rbac(suggestion)
    held = [r for r in rules("ClusterRole", n.CONTROLLER) if "*" in r["verbs"]]
    for rule in role["rules"]:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                assert any(group in h["apiGroups"] and resource in h["resources"] for h in held)


def test_the_controller_never_writes_an_experiment_but_its_status() -> None:
    granted = rules("ClusterRole", n.CONTROLLER)
    for verb in ("create", "update", "patch", "delete"):
        assert not allows(granted, "kubeflow.org", "experiments", verb)


def test_the_controller_may_delete_volumes_and_the_webhook_only_reads() -> None:
    assert allows(rules("ClusterRole", n.CONTROLLER), "", "persistentvolumes", "delete")
    webhook = rules("ClusterRole", n.WEBHOOK) + rules("Role", n.WEBHOOK)
    assert {verb for rule in webhook for verb in rule["verbs"]} == {"get", "list", "watch"}
    for need in [("", "namespaces", "get"), ("", "persistentvolumes", "get")]:
        assert allows(webhook, *need)


def test_bindings_join_each_service_account_to_its_own_roles() -> None:
    docs = documents()
    accounts = {
        (d["metadata"]["namespace"], d["metadata"]["name"])
        for d in docs
        if d["kind"] == "ServiceAccount"
    }
    roles = {
        (d["kind"], d["metadata"]["name"]) for d in docs if d["kind"] in ("Role", "ClusterRole")
    }
    bindings = [d for d in docs if d["kind"].endswith("RoleBinding")]
    assert len(bindings) == 4
    for binding in bindings:
        [subject] = binding["subjects"]
        assert (subject["namespace"], subject["name"]) in accounts
        assert (binding["roleRef"]["kind"], binding["roleRef"]["name"]) in roles
        assert binding["roleRef"]["name"] == subject["name"]
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    assert {d["spec"]["template"]["spec"]["serviceAccountName"] for d in deployments} == {
        name for _, name in accounts
    }


def test_no_verb_is_granted_twice_in_a_table() -> None:
    for table in (CONTROLLER_CLUSTER, *(t for pair in TABLES.values() for t in pair)):
        assert len(triples(table)) == len(set(triples(table)))
