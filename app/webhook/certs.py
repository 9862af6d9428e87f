"""The serving certificate, re-read when its files change, never lost to a half-written pair.

``--cert-dir`` holds ``tls.crt`` and ``tls.key``, the names a Kubernetes TLS Secret mounts
(cert-manager and similar rotate them in place). Before each new connection the server asks for
the current context. The pair is loaded again when the content of either file changed; the
content is read (and hashed) only when the file's identity (device, inode, size, modification
time) changed, so the usual cost is two ``stat`` calls. File times come from a coarse clock (a
few milliseconds), so a file rewritten in place within one tick of the last look could keep its
identity: as git does for its "racily clean" index, a file modified in the last two seconds is
read every time.

A Secret volume swaps both files at once through a symlink; a pair copied by hand is written one
file after the other, so for a moment the certificate does not match the key. Such a pair fails
to load: the server keeps the previous context, logs ``certificate-reload-failed`` once for that
state of the files, and tries again when they change again. Connections already open keep the
context they started with.

Only the first load may fail hard (``CertificateError``): without a certificate there is nothing
to serve.
"""

from __future__ import annotations

import hashlib
import os
import ssl
import time
from dataclasses import dataclass
from pathlib import Path

from katib_resume.app.common.logs import JsonLog

CERT_FILE, KEY_FILE = "tls.crt", "tls.key"
RACY_NS = 2_000_000_000
Identity = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class Seen:
    """One file as last looked at: its identity and a hash of its content (None: unreadable)."""

    identity: Identity | None
    digest: bytes | None


class CertificateError(Exception):
    """The certificate pair cannot be loaded; the message names the directory and the reason."""


class Certificates:
    def __init__(self, cert_dir: Path, log: JsonLog) -> None:
        self.cert_dir, self._log = cert_dir, log
        self._seen = self._look((Seen(None, None), Seen(None, None)))
        self._context = load_context(cert_dir)
        self.loaded = 1
        """How many times a pair was loaded (tests and logs watch rotations with it)."""

    def context(self) -> ssl.SSLContext:
        """The context for a new connection: reloaded first if the files changed."""
        seen = self._look(self._seen)
        changed = [now.digest for now in seen] != [then.digest for then in self._seen]
        self._seen = seen
        if changed:
            self._reload()
        return self._context

    def _reload(self) -> None:
        try:
            self._context = load_context(self.cert_dir)
        except CertificateError as error:
            self._log.warning("certificate-reload-failed", reason=str(error), keeping="previous")
            return
        self.loaded += 1
        self._log.info("certificate-reloaded", cert_dir=str(self.cert_dir), loads=self.loaded)

    def _look(self, before: tuple[Seen, Seen]) -> tuple[Seen, Seen]:
        cert, key = before
        return _observe(self.cert_dir / CERT_FILE, cert), _observe(self.cert_dir / KEY_FILE, key)


def load_context(cert_dir: Path) -> ssl.SSLContext:
    """A server context with the pair in ``cert_dir`` (TLS 1.2 or later)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    for name in (CERT_FILE, KEY_FILE):
        if not (cert_dir / name).is_file():
            raise CertificateError(f"{cert_dir}: {name} not found")
    try:
        context.load_cert_chain(cert_dir / CERT_FILE, cert_dir / KEY_FILE, password=_no_password)
    except ssl.SSLError as error:
        detail = error.reason or str(error)
        raise CertificateError(
            f"{cert_dir}: cannot load {CERT_FILE} and {KEY_FILE}: not a PEM certificate chain "
            f"and its private key ({detail})"
        ) from None
    except OSError as error:
        raise CertificateError(
            f"{cert_dir}: cannot read {CERT_FILE} and {KEY_FILE}: {error.strerror or error}"
        ) from None
    return context


def _no_password() -> bytes:
    """An encrypted key fails to load instead of prompting on a terminal nobody watches."""
    return b""


def _observe(path: Path, before: Seen) -> Seen:
    """``path`` now: re-read only if its identity changed or it was just modified."""
    try:
        found = os.stat(path)
        identity = (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)
        racy = time.time_ns() - found.st_mtime_ns < RACY_NS
        if identity == before.identity and not racy:
            return before
        return Seen(identity, hashlib.sha256(path.read_bytes()).digest())
    except OSError:
        return Seen(None, None)
