"""The composition root of ``katib-resume suggestion-server``.

It serves Katib's Suggestion API on ``--port`` (6789, ``suggestion-api``) and the EarlyStopping
API on ``--early-stopping-port`` (6788, ``earlystop-api``), both on every address, with gRPC
health answering ``SERVING`` for ``manager.v1beta1.Suggestion`` (the Deployment's probes). The
state lives under ``--data-dir`` (Katib's ``volumeMountPath``, ``/opt/katib/data``), one
directory per Experiment, so the Deployment that ``resumePolicy: FromVolume`` recreates carries
on where the old one stopped. SIGTERM or SIGINT stops it.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from katib_resume.adapters.grpc.server import ApiServer
from katib_resume.app.common.process import stop_on_signals, wait_until
from katib_resume.app.suggestion.service import SuggestionApi
from katib_resume.core.katib import DEFAULT_MOUNT_PATH, GRPC_HEALTH_SERVICE

EXIT_OK = 0


def suggestion_server(args: argparse.Namespace) -> int:
    chosen = DEFAULT_MOUNT_PATH if args.data_dir is None else args.data_dir
    data_dir = Path(chosen) if chosen else None
    api = SuggestionApi(data_dir, args.seed)
    ports = [p for p in (args.port, args.early_stopping_port) if p]  # 0: not served here
    addresses = [f"0.0.0.0:{p}" for p in ports]
    server = ApiServer(api.handlers(), addresses, healthy=[GRPC_HEALTH_SERVICE])
    print(
        f"suggestion-server: serving on port(s) {', '.join(map(str, ports))},"
        f" state in {data_dir or '(memory)'}",
        file=sys.stderr,
    )
    stop = threading.Event()
    stop_on_signals(stop, lambda name: print(f"suggestion-server: {name}", file=sys.stderr))
    wait_until(stop)
    server.stop(grace=5)
    return EXIT_OK
