"""What an install is generated from: the flags, already read and checked by the command."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from katib_resume.app.common.wiring import DEFAULT_NAMESPACE
from katib_resume.core.addresses import DB_MANAGER_ADDRESS


def default_image() -> str:
    """``katib-resume:<version>``: a fixed tag, so that a ``kind load``-ed image is not pulled.

    Kubernetes pulls ``:latest`` on every start (``imagePullPolicy`` defaults to ``Always`` for
    it), which fails for an image that exists only on the nodes.
    """
    return f"katib-resume:{metadata.version('katib-resume')}"


@dataclass(frozen=True, slots=True)
class Options:
    """The generator's inputs; files (katib-config, CA bundle) are passed in as their contents.

    ``ca_bundle`` is the base64 of the PEM bytes, as ``caBundle`` wants it. ``katib_config`` is
    the katib-config's text: shipped as is, or re-written when ``local_volumes`` changes it.
    """

    katib_config: str
    image: str
    namespace: str = DEFAULT_NAMESPACE
    local_volumes: bool = False
    local_volume_path_prefix: str | None = None
    ca_bundle: str | None = None
    cert_manager: bool = False
    own_suggestions: bool = False
    db_manager_address: str = DB_MANAGER_ADDRESS
    """Katib's katib-db-manager: the controller reads observations there, the sidecar reports."""
