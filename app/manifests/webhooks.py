"""The Validating- and MutatingWebhookConfiguration for Experiments, Katib's pod webhook
(``pod_webhook.py``), and the certificate story.

Both configurations send CREATE and UPDATE of ``experiments.kubeflow.org`` to the webhook Service
and fail closed (``failurePolicy: Fail``): an Experiment that was not checked must not reach the
controller, whose restart and volume rules rely on admission (docs/katib-contract.md#admission). To
keep failing closed from ever locking the install itself, they skip the install's own namespace
through the ``kubernetes.io/metadata.name`` label every namespace carries: with the webhook down
(deleted first while its namespace is torn down, or not started yet), the controller can still
update the Experiments there, remove its finalizers, and let the namespace go.

The API server must trust the webhook's certificate, in one of two ways:

- ``--ca-bundle PEM_FILE``: the CA that signed the Secret's ``tls.crt`` goes into ``caBundle``
  (``docs/install.md`` shows the openssl commands);
- ``--cert-manager``: a self-signed Issuer and a Certificate that writes the Secret, and the
  ``cert-manager.io/inject-ca-from`` annotation, with which cert-manager fills ``caBundle``.

Without either, ``caBundle`` is absent and every admission call fails until it is filled in.
"""

from __future__ import annotations

from katib_resume.app.common import wiring
from katib_resume.app.manifests import names
from katib_resume.app.manifests.options import Options
from katib_resume.core.katib import GROUP
from katib_resume.core.manifest import Manifest

ADMISSION_API_VERSION = "admissionregistration.k8s.io/v1"
CERT_MANAGER_API_VERSION = "cert-manager.io/v1"
INJECT_CA_ANNOTATION = "cert-manager.io/inject-ca-from"
ISSUER = "katib-resume-selfsigned"
TIMEOUT_SECONDS = 10


def webhook_configurations(options: Options) -> list[Manifest]:
    """The Experiment webhooks, both in configurations named ``katib-resume``."""
    validating = ("ValidatingWebhookConfiguration", "validator", wiring.VALIDATE_PATH)
    mutating = ("MutatingWebhookConfiguration", "defaulter", wiring.MUTATE_PATH)
    return [_configuration(options, *validating), _configuration(options, *mutating)]


def cert_manager_objects(namespace: str) -> list[Manifest]:
    """A self-signed Issuer and the serving Certificate, written to the webhook's Secret."""
    issuer: Manifest = {"apiVersion": CERT_MANAGER_API_VERSION, "kind": "Issuer"}
    issuer |= {"metadata": names.metadata(ISSUER, namespace, "webhook"), "spec": {"selfSigned": {}}}
    host = names.service_host(namespace)
    spec = {
        "secretName": names.WEBHOOK_SECRET,
        "dnsNames": [host, f"{host}.cluster.local"],
        "issuerRef": {"kind": "Issuer", "name": ISSUER},
    }
    certificate: Manifest = {"apiVersion": CERT_MANAGER_API_VERSION, "kind": "Certificate"}
    certificate |= {"metadata": names.metadata(names.WEBHOOK, namespace, "webhook"), "spec": spec}
    return [issuer, certificate]


def _configuration(options: Options, kind: str, role: str, path: str) -> Manifest:
    webhook = _webhook(options, f"{role}.experiment.katib-resume.kubeflow.org", path)
    return configuration(options, kind, names.WEBHOOK_CONFIGURATION, webhook)


def configuration(options: Options, kind: str, name: str, webhook: Manifest) -> Manifest:
    """A webhook configuration of one webhook, trusted as the flags say."""
    meta = names.metadata(name, component="webhook")
    if options.cert_manager:
        meta["annotations"] = {INJECT_CA_ANNOTATION: f"{options.namespace}/{names.WEBHOOK}"}
    return {
        "apiVersion": ADMISSION_API_VERSION,
        "kind": kind,
        "metadata": meta,
        "webhooks": [webhook],
    }


def client_config(options: Options, path: str) -> Manifest:
    """The webhook Service's ``path``, with the CA bundle when one was given."""
    service = {
        "name": names.WEBHOOK,
        "namespace": options.namespace,
        "path": path,
        "port": names.SERVICE_PORT,
    }
    client: Manifest = {"service": service}
    if options.ca_bundle is not None:
        client["caBundle"] = options.ca_bundle
    return client


def outside_install(namespace: str) -> Manifest:
    """Every namespace but the install's (the label each namespace carries)."""
    return {"key": names.NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": [namespace]}


def _webhook(options: Options, name: str, path: str) -> Manifest:
    rule = {
        "apiGroups": [GROUP],
        "apiVersions": ["v1beta1"],
        "operations": ["CREATE", "UPDATE"],
        "resources": ["experiments"],
        "scope": "Namespaced",
    }
    return {
        "name": name,
        "clientConfig": client_config(options, path),
        "rules": [rule],
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "timeoutSeconds": TIMEOUT_SECONDS,
        "admissionReviewVersions": ["v1"],
        "matchPolicy": "Equivalent",
        "namespaceSelector": {"matchExpressions": [outside_install(options.namespace)]},
    }
