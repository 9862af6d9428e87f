"""Katib's pod webhook: the MutatingWebhookConfiguration ``katib.kubeflow.org``.

It sends the CREATE of every pod in a namespace labelled
``katib.kubeflow.org/metrics-collector-injection: enabled`` to ``/mutate-pod`` of our webhook
Service, which injects Katib's metrics-collector sidecar into a Trial's pods and lets every
other pod through unchanged (docs/webhook.md#pods). The names, the selector and the exclusion
are Katib's, so applying this replaces a Katib install's pod webhook rather than adding a second
injector beside it:

- no ``objectSelector`` (Katib has none): whether a pod is a Trial's is decided by its owners;
- a ``matchCondition`` that skips requests made by the controller's own service account, as
  Katib skips ``katib-controller`` (it creates no pods, so nothing it does waits on the webhook);
- the install's namespace is skipped too, as by the Experiment webhooks, so that a webhook that
  is down cannot keep its own pods from starting;
- ``failurePolicy: Fail`` (Katib's, by default): a Trial pod must not start without its
  collector, or its metrics are lost. The price is Katib's: while the webhook is down, no pod
  starts in a labelled namespace.
"""

from __future__ import annotations

from katib_resume.app.common import wiring
from katib_resume.app.manifests import names
from katib_resume.app.manifests.options import Options
from katib_resume.app.manifests.webhooks import (
    TIMEOUT_SECONDS,
    client_config,
    configuration,
    outside_install,
)
from katib_resume.core.katib import NAMESPACE_INJECTION_LABEL
from katib_resume.core.manifest import Manifest

EXCLUDED_CONDITION = "exclude-katib-resume-controller"


def pod_webhook_configuration(options: Options) -> Manifest:
    kind = "MutatingWebhookConfiguration"
    return configuration(options, kind, names.POD_WEBHOOK_CONFIGURATION, pod_webhook(options))


def pod_webhook(options: Options) -> Manifest:
    rule = {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": ["pods"],
        "scope": "Namespaced",
    }
    selector = {
        "matchLabels": {NAMESPACE_INJECTION_LABEL: "enabled"},
        "matchExpressions": [outside_install(options.namespace)],
    }
    return {
        "name": names.POD_WEBHOOK,
        "clientConfig": client_config(options, wiring.POD_PATH),
        "rules": [rule],
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "timeoutSeconds": TIMEOUT_SECONDS,
        "admissionReviewVersions": ["v1"],
        "matchPolicy": "Equivalent",
        "reinvocationPolicy": "Never",
        "namespaceSelector": selector,
        "matchConditions": [_not_the_controller(options.namespace)],
    }


def _not_the_controller(namespace: str) -> Manifest:
    account = f"system:serviceaccount:{namespace}:{names.CONTROLLER}"
    return {"name": EXCLUDED_CONDITION, "expression": f'request.userInfo.username != "{account}"'}
