"""Who may do what: the permission tables, and the RBAC objects generated from them.

The tables are the one statement of what each binary does to the API; the ClusterRoles and Roles
are generated from them and the tests check both against the code's needs. Two identities, so
that each binary holds only what it uses: the webhook is reachable by the API server over the
network and only reads (namespaces for Katib's label check, PersistentVolumes for the stale-PV
check, the katib-config, and for the pod webhook the objects that own a Trial's pod); the
controller writes.

Why some rows are what they are:

- ``*`` on Trials: the controller creates the early-stopping Role of a Suggestion, which grants
  ``*`` on ``trials`` and ``trials/status`` (``core.resources.desired_rbac``), and Kubernetes lets
  a subject grant only what it holds itself (RBAC escalation prevention).
- Experiments are only read and their status written: the planner never changes an
  Experiment's spec or metadata (``core.actions``: its only Experiment write is ``UpdateStatus``).
- ``/finalizers``: setting ``blockOwnerDeletion`` on an owner reference needs ``update`` on the
  owner's ``finalizers`` subresource (the ``OwnerReferencesPermissionEnforcement`` admission
  plugin); children name the Suggestion, Suggestions and Trials the Experiment. The PV-cleanup
  finalizer itself is on the Suggestion (``core.plan.finalizer``).
- ``delete`` on PersistentVolumes: the controller's PV-cleanup finalizer removes the volume Katib
  leaves behind (docs/katib-contract.md#garbage-collection, bug 4).
- Jobs and Katib's other run-object kinds (``--run-trials``): the controller creates a Trial's
  run object from its ``runSpec``, watches it and deletes it once the Trial completes, as Katib's
  trial controller does; a kind whose CRD is not installed is simply not watched.
- The webhook's ``get`` on Trials, Experiments, Suggestions and the run-object kinds: the pod
  webhook walks a pod's owners up to its Trial (a Job, then the Trial), and reads the Experiment
  and the Suggestion as Katib's does. No pod permission anywhere: the webhook gets the pod in
  the review, and the controller never reads pods.
- ConfigMaps and Leases only in the install's namespace (a Role): the katib-config and the
  leader-election Lease live there, and reading every ConfigMap of the cluster is not needed.
"""

from __future__ import annotations

from dataclasses import dataclass

from katib_resume.app.manifests import names
from katib_resume.core.katib import GROUP
from katib_resume.core.manifest import Manifest

RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
READ = ("get", "list", "watch")
OWN = (*READ, "create", "update", "patch", "delete")
STATUS = ("get", "update", "patch")


@dataclass(frozen=True, slots=True)
class Permission:
    group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]


CONTROLLER_CLUSTER = (
    Permission(GROUP, ("experiments",), READ),
    Permission(GROUP, ("experiments/status", "suggestions/status"), STATUS),
    Permission(GROUP, ("experiments/finalizers", "suggestions/finalizers"), ("update",)),
    Permission(GROUP, ("suggestions",), OWN),
    Permission(GROUP, ("trials", "trials/status", "trials/finalizers"), ("*",)),
    Permission("apps", ("deployments",), OWN),
    Permission("", ("services", "persistentvolumeclaims", "serviceaccounts"), OWN),
    Permission("", ("persistentvolumes",), OWN),
    Permission("rbac.authorization.k8s.io", ("roles", "rolebindings"), OWN),
    Permission("", ("events",), ("create", "patch", "update")),
    Permission("events.k8s.io", ("events",), ("create", "patch", "update")),
    Permission("", ("namespaces",), ("get",)),
    Permission("batch", ("jobs",), OWN),
    Permission(GROUP, ("tfjobs", "pytorchjobs", "mpijobs", "xgboostjobs"), OWN),
    Permission("trainer.kubeflow.org", ("trainjobs",), OWN),
)
CONTROLLER_NAMESPACED = (
    Permission("", ("configmaps",), READ),
    Permission("coordination.k8s.io", ("leases",), ("get", "create", "update", "patch")),
)
WEBHOOK_CLUSTER = (
    Permission("", ("namespaces",), READ),
    Permission("", ("persistentvolumes",), READ),
    Permission(GROUP, ("experiments", "suggestions", "trials"), ("get",)),
    Permission("batch", ("jobs",), ("get",)),
    Permission(GROUP, ("tfjobs", "pytorchjobs", "mpijobs", "xgboostjobs"), ("get",)),
    Permission("trainer.kubeflow.org", ("trainjobs",), ("get",)),
)
WEBHOOK_NAMESPACED = (Permission("", ("configmaps",), READ),)

TABLES = {
    names.CONTROLLER: (CONTROLLER_CLUSTER, CONTROLLER_NAMESPACED),
    names.WEBHOOK: (WEBHOOK_CLUSTER, WEBHOOK_NAMESPACED),
}


def rbac(namespace: str) -> list[Manifest]:
    """Per binary: ServiceAccount, ClusterRole + binding, Role + binding in ``namespace``."""
    found: list[Manifest] = []
    for name, (cluster, namespaced) in TABLES.items():
        found += [service_account(name, namespace), role("ClusterRole", name, None, cluster)]
        found.append(binding("ClusterRoleBinding", name, None, namespace))
        found += [role("Role", name, namespace, namespaced)]
        found.append(binding("RoleBinding", name, namespace, namespace))
    return found


def service_account(name: str, namespace: str) -> Manifest:
    meta = names.metadata(name, namespace, _component(name))
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}


def role(kind: str, name: str, namespace: str | None, table: tuple[Permission, ...]) -> Manifest:
    rules = [_rule(permission) for permission in table]
    meta = names.metadata(name, namespace, _component(name))
    return {"apiVersion": RBAC_API_VERSION, "kind": kind, "metadata": meta, "rules": rules}


def binding(kind: str, name: str, namespace: str | None, subject_namespace: str) -> Manifest:
    role_kind = kind.removesuffix("Binding")
    subject = {"kind": "ServiceAccount", "name": name, "namespace": subject_namespace}
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": kind,
        "metadata": names.metadata(name, namespace, _component(name)),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
        "subjects": [subject],
    }


def _rule(permission: Permission) -> Manifest:
    return {
        "apiGroups": [permission.group],
        "resources": list(permission.resources),
        "verbs": list(permission.verbs),
    }


def _component(name: str) -> str:
    return name.removeprefix(f"{names.APP}-")
