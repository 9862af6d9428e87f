"""``katib-resume controller``: the reconcile loop on a real cluster.

Wiring only (the composition root of the cluster mode): credentials, the watch-fed cluster,
the katib-config ConfigMap, the suggestion services' gRPC client, leader election, probes,
metrics, signals. The ``kubernetes`` and ``grpc`` imports happen here, inside the command, so
no other command (and no ``--help``) pays for them.

Shutdown is graceful: SIGTERM or SIGINT stops new reconciles, lets those in flight finish,
releases the Lease (a standby takes over at once) and exits 0. A leader that lost its Lease
exits 1 so that its Deployment restarts it as a candidate: two leaders are never possible.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from katib_resume.app.cluster.host import Host
from katib_resume.app.cluster.httpd import TEXT, Answer, ProbeServer, parse_address
from katib_resume.app.common import process
from katib_resume.app.common.errors import InputError
from katib_resume.app.common.logs import configure
from katib_resume.app.common.wiring import (
    DEFAULT_NAMESPACE,
    HEALTHZ_PATH,
    READYZ_PATH,
    RELIST_SECONDS,
)
from katib_resume.core.names import CONFIG_MAP_NAME

if TYPE_CHECKING:  # imported for real inside the command: `--help` loads neither kubernetes
    # nor grpc
    from katib_resume.adapters.grpc import Endpoints
    from katib_resume.adapters.k8s.cluster import KubeCluster
    from katib_resume.adapters.k8s.config_map import ConfigMapSource
    from katib_resume.adapters.k8s.lease import LeaseElector
    from katib_resume.adapters.k8s.transport import Transport
    from katib_resume.app.cluster.metrics import Metrics
    from katib_resume.app.loop.trial_reconcile import TrialWiring

log = logging.getLogger("katib_resume.controller")
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
SYNC_TIMEOUT = 60.0


class SystemClock:
    """``core.ports.Clock`` on the wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


def own_namespace() -> str:
    """The controller's namespace: ``POD_NAMESPACE``, the service account's, or kubeflow."""
    if os.environ.get("POD_NAMESPACE"):
        return os.environ["POD_NAMESPACE"]
    try:
        return SERVICE_ACCOUNT_NAMESPACE.read_text(encoding="utf-8").strip() or DEFAULT_NAMESPACE
    except OSError:
        return DEFAULT_NAMESPACE


def config_map_ref(given: tuple[str, str] | None) -> tuple[str, str]:
    """``--config-map`` as parsed (default: the controller's namespace and ``katib-config``)."""
    return given if given is not None else (own_namespace(), CONFIG_MAP_NAME)


@dataclass(frozen=True, slots=True)
class Settings:
    kubeconfig: str | None
    namespace: str | None
    config_map: tuple[str, str]
    metrics: tuple[str, int]
    health: tuple[str, int]
    leader_elect: bool
    workers: int
    endpoints: Endpoints
    suggestion_timeout: float
    db_manager: str
    run_trials: bool = False
    metrics_wait: float = 300.0
    relist_seconds: float = RELIST_SECONDS

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Settings:
        from katib_resume.adapters.grpc import Endpoints

        try:
            metrics, health = parse_address(args.metrics_addr), parse_address(args.health_addr)
        except ValueError as error:
            raise InputError(f"--metrics-addr/--health-addr: {error}") from None
        try:
            endpoints = Endpoints(args.suggestion_endpoint, args.early_stopping_endpoint)
        except ValueError as error:
            raise InputError(f"--suggestion-endpoint/--early-stopping-endpoint: {error}") from None
        return cls(
            kubeconfig=args.kubeconfig,
            namespace=None if args.all_namespaces else args.namespace,
            config_map=config_map_ref(args.config_map),
            metrics=metrics,
            health=health,
            leader_elect=args.leader_elect,
            workers=args.workers,
            endpoints=endpoints,
            suggestion_timeout=args.suggestion_timeout,
            db_manager=args.db_manager_address,
            run_trials=args.run_trials,
            metrics_wait=args.metrics_wait,
            relist_seconds=args.relist_seconds,
        )


def controller(args: argparse.Namespace) -> int:
    configure(args.log_level)
    settings = Settings.from_args(args)
    stop = threading.Event()
    process.stop_on_signals(stop, _signalled)
    return run(settings, stop)


def run(settings: Settings, stop: threading.Event) -> int:
    """Run until ``stop``; the exit status."""
    from katib_resume.adapters.grpc import GrpcSuggestionService
    from katib_resume.adapters.k8s.cluster import KubeCluster
    from katib_resume.adapters.k8s.config_map import ConfigMapSource
    from katib_resume.adapters.k8s.lease import LeaseElector
    from katib_resume.app.cluster.metrics import Metrics

    transport = process.connect(settings.kubeconfig)
    identity = os.environ.get("POD_NAME") or f"{socket.gethostname()}_{os.getpid()}"
    trials, kinds, close_log = _trials(settings, transport)
    cluster = KubeCluster(
        transport,
        namespace=settings.namespace,
        instance=identity,
        kinds=kinds,
        relist_seconds=settings.relist_seconds,
    )
    config = ConfigMapSource(transport, *settings.config_map)
    service = GrpcSuggestionService(
        cluster,
        settings.endpoints,
        timeout=settings.suggestion_timeout,
        db_manager=settings.db_manager,
    )
    metrics = Metrics(cluster, lambda: dict(transport.counts.counts), service.calls)
    host = Host(
        cluster,
        config,
        SystemClock(),
        service=service,
        workers=settings.workers,
        observe=metrics.observe,
        trials=trials,
    )
    elector = None
    if settings.leader_elect:
        elector = LeaseElector(transport, settings.config_map[0], identity)
    probes = _serve_probes(settings, cluster, metrics)
    try:
        return _loop(cluster, config, host, elector, stop)
    finally:
        for server in probes:
            server.shutdown()
        service.close()
        close_log()
        cluster.close()
        config.close()


def _trials(
    settings: Settings, transport: Transport
) -> tuple[TrialWiring | None, tuple[tuple[str, str], ...], Callable[[], None]]:
    """With ``--run-trials``: the trial wiring (katib-db-manager's observation log, the run
    kinds the server serves), the kinds to watch and how to close the log; else none, the
    default kinds and nothing to close."""
    from katib_resume.adapters.grpc.observations import GrpcObservationLog
    from katib_resume.adapters.k8s.cluster import WATCHED
    from katib_resume.adapters.k8s.run_kinds import served_run_kinds
    from katib_resume.app.loop.trial_reconcile import TrialWiring

    if not settings.run_trials:
        return None, tuple(WATCHED), lambda: None
    served = served_run_kinds(transport, settings.namespace)
    observations = GrpcObservationLog(settings.db_manager)
    wiring = TrialWiring(observations, settings.metrics_wait, frozenset(served))
    return wiring, (*WATCHED, *served), observations.close


def _loop(
    cluster: KubeCluster,
    config: ConfigMapSource,
    host: Host,
    elector: LeaseElector | None,
    stop: threading.Event,
) -> int:
    log.info("starting", extra={"namespace": cluster.namespace or "*", "workers": host.workers})
    if not (cluster.start(SYNC_TIMEOUT) and config.start(SYNC_TIMEOUT)):
        log.error("caches did not sync", extra={"seconds": SYNC_TIMEOUT})
        return 1
    if elector is None:
        host.run(stop)
        log.info("stopped", extra={"lost_lease": False})
        return 0
    threading.Thread(target=_lead, args=(elector, stop), name="lease", daemon=True).start()
    host.run(stop, elector.leading)
    elector.release()
    lost = elector.lost.is_set()
    log.info("stopped", extra={"lost_lease": lost})
    return 1 if lost else 0


def _lead(elector: LeaseElector, stop: threading.Event) -> None:
    """Hold the Lease until ``stop``; losing it stops the controller."""
    elector.run(stop)
    if elector.lost.is_set():
        stop.set()


def _serve_probes(settings: Settings, cluster: KubeCluster, metrics: Metrics) -> list[ProbeServer]:
    def healthz() -> Answer:
        return 200, TEXT, b"ok\n"

    def readyz() -> Answer:
        if not cluster.synced:
            return 503, TEXT, b"caches not synced\n"
        return 200, TEXT, b"ok\n"

    def exposition() -> Answer:
        return 200, "text/plain; version=0.0.4; charset=utf-8", metrics.exposition()

    try:
        health = ProbeServer(settings.health, {HEALTHZ_PATH: healthz, READYZ_PATH: readyz}).start()
        served = ProbeServer(settings.metrics, {"/metrics": exposition}).start()
    except OSError as error:
        raise InputError(f"cannot listen for probes or metrics: {error}") from None
    log.info("serving", extra={"health": health.url, "metrics": served.url})
    return [health, served]


def _signalled(name: str) -> None:
    log.info("signal received: finishing", extra={"signal": name})
