"""Katib's object names (docs/katib-contract.md#names) and the Kubernetes rules they must satisfy.

Every object a Suggestion owns is named ``<experiment>-<algorithm>``; the cluster-scoped PV adds
the namespace. Katib admits names that produce invalid Service names (bugs 20 and 25) and then
fails forever at reconcile time; ``derived_name_errors`` lets admission deny them up front.
"""

from __future__ import annotations

import re

DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_MAX = 63
SUBDOMAIN_MAX = 253

CONFIG_MAP_NAME = "katib-config"
"""The katib-config ConfigMap (docs/katib-contract.md#katib-config); here, not in ``core.katib``, so
that the command line's ``--help`` can name it without importing the models."""


def service_name(suggestion: str, algorithm: str) -> str:
    """Deployment, Service, PVC, ServiceAccount, Role and RoleBinding: ``<name>-<algorithm>``."""
    return f"{suggestion}-{algorithm}"


def pv_name(suggestion: str, algorithm: str, namespace: str) -> str:
    """The cluster-scoped PV: ``<name>-<algorithm>-<namespace>``."""
    return f"{suggestion}-{algorithm}-{namespace}"


def is_dns1123_label(value: str) -> bool:
    return len(value) <= LABEL_MAX and DNS1123_LABEL.fullmatch(value) is not None


def is_dns1035_label(value: str) -> bool:
    return len(value) <= LABEL_MAX and DNS1035_LABEL.fullmatch(value) is not None


def is_dns1123_subdomain(value: str) -> bool:
    """Kubernetes' rule: the whole name at most 253 characters (no per-part limit)."""
    return len(value) <= SUBDOMAIN_MAX and DNS1123_SUBDOMAIN.fullmatch(value) is not None


def derived_name_errors(experiment: str, algorithm: str, namespace: str) -> list[str]:
    """Why the names derived from this Experiment would be rejected by Kubernetes, if they would.

    The Service name must be a DNS-1035 label and doubles as a label value (63 characters); the
    PV name must be a DNS-1123 subdomain.
    """
    errors: list[str] = []
    service = service_name(experiment, algorithm)
    if not is_dns1035_label(service):
        errors.append(
            f'the Service and Deployment name "{service}" (<experiment>-<algorithm>) must be a '
            f"DNS-1035 label: at most {LABEL_MAX} lower case alphanumeric characters or '-', "
            "starting with a letter and ending with an alphanumeric character"
        )
    pv = pv_name(experiment, algorithm, namespace)
    if not is_dns1123_subdomain(pv):
        errors.append(
            f'the PersistentVolume name "{pv}" (<experiment>-<algorithm>-<namespace>) must be '
            f"a DNS-1123 subdomain of at most {SUBDOMAIN_MAX} characters"
        )
    return errors
