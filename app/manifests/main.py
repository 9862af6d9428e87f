"""``katib-resume manifests``: read the flags' files, generate, print one YAML stream.

The generator (``app.manifests``) is pure; this module does the I/O around it and turns every
problem with a file into one line naming it (exit status 2): an unreadable or invalid
katib-config, a CA bundle that holds no PEM certificate, or a path prefix without
``--local-volumes``. A missing trust setting is not an error (the ``caBundle`` can be patched in
later) but gets a one-line warning on stderr, because until then every admission call fails.
"""

from __future__ import annotations

import argparse
import base64
import re
import sys
from pathlib import Path

from katib_resume.app.common.errors import InputError
from katib_resume.app.common.inputs import (
    SHIPPED_ORIGIN,
    config_from_text,
    read_text,
    shipped_config_text,
)
from katib_resume.app.manifests import Options, default_image, generate, render

PEM_CERTIFICATE = re.compile(
    r"-----BEGIN CERTIFICATE-----\s(.*?)-----END CERTIFICATE-----", flags=re.DOTALL
)
DER_SEQUENCE = 0x30
"""The first byte of every DER certificate (an ASN.1 SEQUENCE)."""
NO_TRUST_WARNING = (
    "katib-resume: warning: neither --ca-bundle nor --cert-manager: the webhook configurations "
    "have no caBundle, so every Experiment write outside the install's namespace fails until "
    "one is set (see docs/install.md)"
)


def manifests(args: argparse.Namespace) -> int:
    if args.local_volume_path_prefix and not args.local_volumes:
        raise InputError("--local-volume-path-prefix needs --local-volumes")
    options = Options(
        katib_config=_katib_config_text(args.config),
        image=args.image or default_image(),
        namespace=args.namespace,
        local_volumes=args.local_volumes,
        local_volume_path_prefix=args.local_volume_path_prefix,
        ca_bundle=read_ca_bundle(args.ca_bundle) if args.ca_bundle else None,
        cert_manager=args.cert_manager,
        own_suggestions=args.own_suggestions,
        db_manager_address=args.db_manager_address,
    )
    if options.ca_bundle is None and not options.cert_manager:
        print(NO_TRUST_WARNING, file=sys.stderr)
    sys.stdout.write(render(generate(options)))
    return 0


def read_ca_bundle(path: str) -> str:
    """The base64 of the PEM file's certificates, as ``caBundle`` wants it; checked first."""
    try:
        text = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not an ASCII PEM file"
        raise InputError(f"{path}: cannot read: {reason}") from None
    blocks = list(PEM_CERTIFICATE.finditer(text))
    if not blocks:
        raise InputError(f"{path}: no PEM certificate (-----BEGIN CERTIFICATE-----) found")
    for number, block in enumerate(blocks, start=1):
        if not _is_der_certificate(block.group(1)):
            raise InputError(f"{path}: certificate {number} is not valid PEM")
    pem = "\n".join(block.group(0) for block in blocks) + "\n"
    return base64.b64encode(pem.encode("ascii")).decode("ascii")


def _is_der_certificate(body: str) -> bool:
    """Strict base64 of something that starts as a DER certificate does (not a full parse)."""
    try:
        der = base64.b64decode("".join(body.split()), validate=True)
    except ValueError:
        return False
    return len(der) > 1 and der[0] == DER_SEQUENCE


def _katib_config_text(path: str | None) -> str:
    """The katib-config's text, after checking that it parses as one (errors name the file)."""
    if path is None:
        text = shipped_config_text()
        config_from_text(text, SHIPPED_ORIGIN)
    else:
        text = read_text(path)
        config_from_text(text, path)
    return text
