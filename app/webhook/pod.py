"""``/mutate-pod``: Katib's pod mutating webhook, over the ports.

A pod that no Trial owns (``owners.py``) is allowed untouched, and so is every operation other
than CREATE. A Trial's pod is read with its Trial and mutated by ``injection.inject``; the answer
is a JSON Patch from the pod as sent to the mutated pod. Refusals follow Katib's codes: 500 when
the Trial (or katib-config) cannot be read, 400 for everything the Trial or the pod gets wrong.
Every read is live (``LiveCluster`` in the binary), as the webhook's other reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from katib_resume.app.webhook.collector import Refused, collector_config
from katib_resume.app.webhook.injection import Sources, inject
from katib_resume.app.webhook.owners import run_object_of
from katib_resume.app.webhook.patch import json_patch
from katib_resume.app.webhook.review import Malformed, Request, allowed, denied
from katib_resume.app.webhook.trial_view import trial_view
from katib_resume.core.actions import ObjectRef
from katib_resume.core.config import ConfigError, KatibConfig, MetricsCollectorConfig
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Cluster, ClusterError, ConfigSource, NotFound

SERVER_ERROR = 500


@dataclass(frozen=True, slots=True)
class PodInjector:
    cluster: Cluster
    config: ConfigSource
    db_manager: str

    def mutate(self, request: Request) -> Manifest:
        if request.operation != "CREATE":
            return allowed(request.uid)
        assert request.obj is not None, "review.parse_request requires object on CREATE"
        pod = checked_pod(request.obj, request.uid)
        namespace = request.namespace or str(pod["metadata"].get("namespace") or "")
        run = run_object_of(self.cluster, pod, namespace)
        if run is None:
            return allowed(request.uid)
        try:
            trial = self._read("Trial", namespace, run.name)
            mutated = inject(pod, trial_view(trial, namespace, run.name), self._sources(namespace))
        except Refused as refused:
            return denied(request.uid, str(refused), refused.code)
        return allowed(request.uid, json_patch(pod, mutated))

    def _sources(self, namespace: str) -> Sources:
        """katib-config is read only for a pod that gets a sidecar (not for Push)."""

        def entry(kind: str) -> MetricsCollectorConfig:
            try:
                return collector_config(self._katib_config(), kind)
            except ConfigError as error:
                raise Refused(str(error)) from None

        return Sources(
            collector_config=entry,
            suggestion=lambda name: self._read("Suggestion", namespace, name),
            experiment=lambda name: self._read("Experiment", namespace, name),
            db_manager=self.db_manager,
            inject_security_context=self._inject_security_context,
        )

    def _inject_security_context(self) -> bool:
        return self._katib_config().init.controller.inject_security_context

    def _katib_config(self) -> KatibConfig:
        try:
            return self.config.katib_config()
        except (ConfigError, ClusterError) as error:
            raise Refused(f"katib-config is unusable: {error}", SERVER_ERROR) from None

    def _read(self, kind: str, namespace: str, name: str) -> Manifest:
        try:
            return self.cluster.get(ObjectRef(API_VERSION, kind, namespace, name))
        except NotFound:
            code = SERVER_ERROR if kind == "Trial" else 400
            raise Refused(f'{kind} "{name}" not found in namespace "{namespace}"', code) from None
        except ClusterError as error:
            raise Refused(f'cannot read {kind} "{name}": {error}', SERVER_ERROR) from None


def checked_pod(pod: Manifest, uid: str) -> Manifest:
    """The pod, with the shapes the mutation relies on checked, or ``Malformed``."""
    metadata = pod.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise Malformed("request.object.metadata: expected an object", uid)
    _string_map(metadata.get("labels"), "request.object.metadata.labels", uid)
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        raise Malformed("request.object.spec: expected an object", uid)
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise Malformed("request.object.spec.containers: expected a list of containers", uid)
    for number, container in enumerate(containers):
        _container(container, f"request.object.spec.containers[{number}]", uid)
    if not isinstance(spec.get("volumes") or [], list):
        raise Malformed("request.object.spec.volumes: expected a list", uid)
    return {**pod, "metadata": metadata}


def _container(container: object, where: str, uid: str) -> None:
    if not isinstance(container, dict) or not isinstance(container.get("name"), str):
        raise Malformed(f"{where}: expected a container with a name", uid)
    for field in ("env", "volumeMounts"):
        if not isinstance(container.get(field) or [], list):
            raise Malformed(f"{where}.{field}: expected a list", uid)


def _string_map(value: object, where: str, uid: str) -> None:
    if value is None:
        return
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise Malformed(f"{where}: expected a map of strings", uid)
