"""``katib-resume manifests``: everything a cluster needs to run katib-resume, as one YAML stream.

Pure Python and YAML, no ``kubernetes`` import (``katib-resume --help`` stays fast, and the
output is the same on any machine). One function per object family, each in the module named for
it: ``crds`` (Katib's CRDs), ``rbac`` (identities and the permission tables), ``katib_config``
(the ConfigMap and the local-volume mode), ``workloads`` (Deployments, Service, disruption
budget), ``webhooks`` (admission configurations and certificates) and ``pod_webhook`` (Katib's
pod webhook, the metrics-collector sidecar); ``names`` holds the names
they share. ``generate`` orders the documents so that ``kubectl apply -f -`` can create them in
one pass: definitions first, then what runs, then the admission configurations that call it.
"""

from __future__ import annotations

from typing import Any

import yaml

from katib_resume.app.manifests import names
from katib_resume.app.manifests.crds import katib_crds
from katib_resume.app.manifests.katib_config import config_map, storage_class
from katib_resume.app.manifests.options import Options, default_image
from katib_resume.app.manifests.pod_webhook import pod_webhook_configuration
from katib_resume.app.manifests.rbac import rbac
from katib_resume.app.manifests.webhooks import cert_manager_objects, webhook_configurations
from katib_resume.app.manifests.workloads import workloads
from katib_resume.core.manifest import Manifest

__all__ = ["Options", "default_image", "generate", "render"]


def generate(options: Options) -> list[Manifest]:
    found = [*katib_crds(), namespace(options.namespace), *rbac(options.namespace)]
    found.append(config_map(options))
    if options.local_volumes:
        found.append(storage_class())
    if options.cert_manager:
        found += cert_manager_objects(options.namespace)
    hooks = [*webhook_configurations(options), pod_webhook_configuration(options)]
    return [*found, *workloads(options), *hooks]


def namespace(name: str) -> Manifest:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": names.metadata(name)}


def render(documents: list[Manifest]) -> str:
    """One multi-document YAML stream; multi-line strings (the katib-config) as literal blocks."""
    return yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False, explicit_start=True)


class _Dumper(yaml.SafeDumper):
    """Safe dumping without anchors (objects may share sub-dicts) and with readable blocks."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)
