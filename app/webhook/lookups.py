"""What admission reads from the world, read only when the core's rules ask for it.

``core.validation.validate`` takes the namespace's labels and the katib-config catalog as
arguments, and returns early for an UPDATE that changes nothing a user controls (a finalizer
removed at deletion). Reading both eagerly would make every such UPDATE depend on the API server
and on katib-config being readable, and an outage or an algorithm dropped from katib-config
could then block deleting an Experiment. So both are handed over as lazy views: the Namespace is
fetched on the first label lookup, katib-config on the first algorithm lookup, at most once per
request.

A failure to read is not a field error of the user's object: it is raised as ``LookupFailed``
and the webhook denies with a server-side status (500) and the reason.

The PVs (the stale-PV check of docs/katib-contract.md#stale-pv-check) are read the same way, live
and only when the core asks: on CREATE of a ``FromVolume`` Experiment that passed every other rule.
A failed read of a PV is Katib's own denial (``..., error: <err>``), so it is ``PVLookupFailed``.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping

from katib_resume.core.actions import ObjectRef
from katib_resume.core.config import ConfigError, KatibConfig
from katib_resume.core.ports import Cluster, ClusterError, ConfigSource, NotFound


class LookupFailed(Exception):
    """The API server or katib-config could not be read; the message says which and why."""


class PVLookupFailed(Exception):
    """A PersistentVolume could not be read; ``error`` says why."""

    def __init__(self, error: ClusterError) -> None:
        super().__init__(str(error))
        self.error = error


class LivePVs(Container[str]):
    """The names of the PersistentVolumes that exist, each read live from the API server (never
    from a cache: a PV left by a deleted Experiment must be seen the moment it exists)."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster

    def __contains__(self, name: object) -> bool:
        try:
            self._cluster.get(ObjectRef("v1", "PersistentVolume", None, str(name)))
        except NotFound:
            return False
        except ClusterError as error:
            raise PVLookupFailed(error) from None
        return True


class NamespaceLabels(Mapping[str, str]):
    """The labels of Namespace ``name``, fetched live on first use; none if it does not exist."""

    def __init__(self, cluster: Cluster, name: str) -> None:
        self._cluster, self._name = cluster, name
        self._labels: dict[str, str] | None = None

    def __getitem__(self, key: str) -> str:
        return self._fetch()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fetch())

    def __len__(self) -> int:
        return len(self._fetch())

    def _fetch(self) -> dict[str, str]:
        if self._labels is None:
            self._labels = self._read()
        return self._labels

    def _read(self) -> dict[str, str]:
        try:
            namespace = self._cluster.get(ObjectRef("v1", "Namespace", None, self._name))
        except NotFound:
            return {}
        except ClusterError as error:
            raise LookupFailed(f'cannot read Namespace "{self._name}": {error}') from None
        labels = (namespace.get("metadata") or {}).get("labels") or {}
        return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


class LiveCatalog:
    """``core.validation.AlgorithmCatalog`` over a ``ConfigSource``, read on the first lookup."""

    def __init__(self, source: ConfigSource) -> None:
        self._source = source
        self._config: KatibConfig | None = None

    def suggestion(self, algorithm: str) -> object:
        return self._fetch().suggestion(algorithm)

    def early_stopping(self, algorithm: str) -> object:
        return self._fetch().early_stopping(algorithm)

    def _fetch(self) -> KatibConfig:
        if self._config is None:
            try:
                self._config = self._source.katib_config()
            except (ConfigError, ClusterError) as error:
                raise LookupFailed(f"katib-config is unusable: {error}") from None
        return self._config
