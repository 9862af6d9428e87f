"""``katib-resume webhook``: serve the admission webhook over HTTPS until SIGTERM or SIGINT.

The cluster and katib-config come through one function, ``_connect``, which builds the live
adapters (``adapters.k8s``: ``LiveCluster`` reads the API server on every call, and the
ConfigMap is watched; imported here only when the command runs, so ``katib-resume --help``
never pays for the ``kubernetes`` import). Tests and embedders pass their
own ``connect`` (a fake cluster and a static config) to ``webhook``.

Start-up problems are one line and exit status 2: an unreadable certificate pair, a port that is
taken. Once serving, the process exits 0 after a graceful stop on SIGTERM (what Kubernetes sends
a Pod) or SIGINT.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from katib_resume.app.common import process
from katib_resume.app.common.errors import InputError

if TYPE_CHECKING:
    from katib_resume.core.ports import Cluster, ConfigSource

EXIT_OK = 0
SYNC_TIMEOUT = 30.0
Connect = Callable[[str | None, tuple[str, str]], "tuple[Cluster, ConfigSource]"]


def _connect(kubeconfig: str | None, config_map: tuple[str, str]) -> tuple[Cluster, ConfigSource]:
    """The live cluster (every read goes to the API server: the stale-volume check must see the
    PersistentVolumes as they are now) and the katib-config ConfigMap ``(namespace, name)``
    (watched, parsed once per change)."""
    from katib_resume.adapters.k8s.config_map import ConfigMapSource
    from katib_resume.adapters.k8s.live import LiveCluster

    transport = process.connect(kubeconfig)
    source = ConfigMapSource(transport, *config_map)
    if not source.start(SYNC_TIMEOUT):
        raise InputError(f"cannot read {source.where} within {SYNC_TIMEOUT:.0f} s")
    return LiveCluster(transport), source


def webhook(args: argparse.Namespace, connect: Connect | None = None) -> int:
    from katib_resume.app.common.logs import configure
    from katib_resume.app.webhook import (
        HEALTHZ,
        MUTATE,
        MUTATE_POD,
        VALIDATE,
        Admission,
        CertificateError,
        JsonLog,
        create_server,
    )

    configure()
    log = JsonLog()
    cluster, config = (connect or _connect)(args.kubeconfig, args.config_map)
    admission = Admission(cluster, config, args.db_manager_address)
    try:
        server = create_server(admission, Path(args.cert_dir), args.port, log)
    except CertificateError as error:
        raise InputError(f"--cert-dir {error}") from None
    except OSError as error:
        raise InputError(f"cannot listen on port {args.port}: {error.strerror or error}") from None
    stop = threading.Event()
    process.stop_on_signals(stop)
    server.start()
    log.info(
        "serving",
        port=server.port,
        cert_dir=args.cert_dir,
        paths=[VALIDATE, MUTATE, MUTATE_POD, HEALTHZ],
    )
    process.wait_until(stop)
    log.info("stopping", reason="signal")
    server.close()
    log.info("stopped")
    return EXIT_OK
