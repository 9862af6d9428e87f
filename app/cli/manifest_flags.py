"""The ``manifests`` command's flags, checked as they are parsed (bad ones: one line, exit 2).

Kept apart from ``cli.main``, which holds the embedded commands, and as light as it: only
``argparse`` and ``core.names`` (plain ``re``) are imported, so ``katib-resume --help`` pays
nothing for it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from katib_resume.app.common.wiring import DEFAULT_NAMESPACE
from katib_resume.core.addresses import DB_MANAGER_ADDRESS
from katib_resume.core.names import LABEL_MAX, is_dns1123_label

if TYPE_CHECKING:
    from katib_resume.app.cli.main import Parser


def dns_label(text: str) -> str:
    """A namespace name: a DNS-1123 label, as Kubernetes requires."""
    if not is_dns1123_label(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a valid namespace name (lower-case letters, digits and '-', "
            f"starting and ending with a letter or digit, at most {LABEL_MAX} characters)"
        )
    return text


def image_reference(text: str) -> str:
    if not text or any(ch.isspace() or not ch.isprintable() for ch in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an image reference")
    return text


def absolute_path(text: str) -> str:
    if not text.startswith("/") or any(not ch.isprintable() for ch in text):
        raise argparse.ArgumentTypeError(f"expected an absolute path, got {text!r}")
    return text


def host_port(text: str) -> str:
    """``host:port`` as Katib's collectors take it (the TensorFlowEvent one insists on it)."""
    host, _, number = text.rpartition(":")
    if not host or not number.isdigit() or not 0 < int(number) < 65536 or " " in text:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return text


def add_manifests(commands: argparse._SubParsersAction[Parser]) -> None:
    manifests = commands.add_parser(
        "manifests", help="print the YAML that installs katib-resume in a cluster"
    )
    manifests.add_argument(
        "-n",
        "--namespace",
        type=dns_label,
        default=DEFAULT_NAMESPACE,
        metavar="NS",
        help="where the controller, the webhook and katib-config live "
        f"(default: {DEFAULT_NAMESPACE})",
    )
    manifests.add_argument(
        "--image", type=image_reference, metavar="IMAGE", help="default: katib-resume:<version>"
    )
    manifests.add_argument(
        "--config",
        metavar="KATIB_CONFIG.yaml",
        help="the katib-config to install (default: Katib's shipped one)",
    )
    manifests.add_argument(
        "--own-suggestions",
        action="store_true",
        help="katib-config runs our suggestion-server (this image) for the algorithms it"
        " implements; Katib's images stay for the others and for early stopping",
    )
    manifests.add_argument(
        "--local-volumes",
        action="store_true",
        help="add the katib-suggestion StorageClass and select it in katib-config",
    )
    manifests.add_argument(
        "--local-volume-path-prefix",
        type=absolute_path,
        metavar="PATH",
        help="with --local-volumes: the nodes' directory for the volumes "
        "(default: the controller's, /tmp/katib/suggestions)",
    )
    manifests.add_argument(
        "--db-manager-address",
        type=host_port,
        default=DB_MANAGER_ADDRESS,
        metavar="HOST:PORT",
        help="Katib's katib-db-manager, for the controller and the injected metrics collector "
        f"(default: {DB_MANAGER_ADDRESS})",
    )
    trust = manifests.add_mutually_exclusive_group()
    trust.add_argument(
        "--ca-bundle",
        metavar="PEM_FILE",
        help="the CA that signed the webhook's certificate, written into caBundle",
    )
    trust.add_argument(
        "--cert-manager",
        action="store_true",
        help="let cert-manager issue the webhook's certificate and inject caBundle",
    )
