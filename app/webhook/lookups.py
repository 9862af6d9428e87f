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
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from core.actions import ObjectRef
from core.config import ConfigError, KatibConfig
from core.ports import Cluster, ClusterError, ConfigSource, NotFound


class LookupFailed(Exception):
    """The API server or katib-config could not be read; the message says which and why."""


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
