"""The config port on the katib-config ConfigMap, re-read when the ConfigMap changes.

A watch keeps the ConfigMap in a store of its own, so asking for the config costs nothing and
an edit takes effect on the next reconcile. The parsed config is kept per ``resourceVersion``:
the YAML is decoded once per change, not once per reconcile. A missing, unparsable or invalid
ConfigMap raises ``ConfigError`` with what is wrong; the loop retries with backoff and the last
good config is never silently kept in place of a broken one (an operator who broke the ConfigMap
must see it, not run on a stale config). A missing ConfigMap or key raises Katib's own texts
(docs/katib-contract.md#katib-config), which a user sees in admission's denials; where we looked
(the namespace, which Katib's texts do not name) goes to a log line, once per new failure.
"""

from __future__ import annotations

import logging
import threading

import yaml

from katib_resume.adapters.k8s.resources import resource
from katib_resume.adapters.k8s.store import Store
from katib_resume.adapters.k8s.transport import Transport
from katib_resume.adapters.k8s.watch import KindWatch
from katib_resume.core.config import (
    ConfigError,
    KatibConfig,
    missing_config_key,
    missing_config_map,
    parse_katib_config,
)
from katib_resume.core.katib import CONFIG_KEY
from katib_resume.core.names import CONFIG_MAP_NAME
from katib_resume.core.objects import version_of

CONFIG_MAPS = resource("v1", "ConfigMap")
log = logging.getLogger("katib_resume.config")


class ConfigMapSource:
    """Implements ``core.ports.ConfigSource``."""

    def __init__(self, transport: Transport, namespace: str, name: str = CONFIG_MAP_NAME) -> None:
        self.namespace, self.name = namespace, name
        self.store = Store(log_limit=1_000)
        self.stop = threading.Event()
        self.watch = KindWatch(transport, self.store, CONFIG_MAPS, namespace, self.stop)
        self.parsed: tuple[str, KatibConfig] | None = None
        self.reported = ""
        """The last failure logged: each reconcile meets it again, the log says it once."""

    def start(self, timeout: float = 30.0) -> bool:
        self.watch.start()
        return self.watch.synced.wait(timeout)

    def close(self) -> None:
        self.stop.set()

    @property
    def where(self) -> str:
        return f"ConfigMap {self.namespace}/{self.name}"

    def katib_config(self) -> KatibConfig:
        try:
            config = self._current()
        except ConfigError as error:
            self._report(error)
            raise
        self.reported = ""
        return config

    def _current(self) -> KatibConfig:
        found = self.store.get(("v1", "ConfigMap", self.namespace, self.name))
        if found is None:
            raise missing_config_map(self.name)
        version = version_of(found)
        if self.parsed is not None and self.parsed[0] == version and version:
            return self.parsed[1]
        config = parse_config_map(found, self.where, self.name)
        self.parsed = (version, config)
        return config

    def _report(self, error: ConfigError) -> None:
        """Log a failure not logged yet, with the namespace its text may not name."""
        if str(error) != self.reported:
            self.reported = str(error)
            log.warning(
                "katib-config unusable", extra={"configMap": self.where, "error": str(error)}
            )


def parse_config_map(
    config_map: dict[str, object], where: str, name: str = CONFIG_MAP_NAME
) -> KatibConfig:
    """The katib-config in ``config_map``'s ``katib-config.yaml`` key; ``where`` prefixes the
    errors that have no Katib text of their own, ``name`` is the ConfigMap's name in Katib's."""
    data = config_map.get("data")
    text = data.get(CONFIG_KEY) if isinstance(data, dict) else None
    if not isinstance(text, str):
        raise missing_config_key(name)
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{where}: {CONFIG_KEY} is not valid YAML: {error}") from None
    try:
        return parse_katib_config(loaded)
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from None
