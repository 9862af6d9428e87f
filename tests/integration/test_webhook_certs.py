"""The serving certificate is re-read while the webhook runs; a half-written pair never stops it.

Each check opens a *new* TLS connection (the server picks the certificate per connection) and
looks at which certificate it was served, by its DER bytes.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from katib_resume.app.webhook import CertificateError, JsonLog, create_server
from tests.support.webhook import VALIDATE_OK, Certs, TlsWebhook, default_admission


@pytest.fixture
def webhook(tmp_path: Path) -> Iterator[TlsWebhook]:
    with TlsWebhook(tmp_path / "certs") as server:
        yield server


def served(webhook: TlsWebhook, ca: trustme.CA) -> bytes:
    """The certificate a new connection trusting ``ca`` is served (it must verify)."""
    context = ssl.create_default_context()
    ca.configure_trust(context)
    connection = webhook.connect(context)
    try:
        connection.request("GET", "/healthz")
        assert webhook.read(connection) == (200, {"status": "ok"})
        sock = connection.sock
        assert isinstance(sock, ssl.SSLSocket)
        der = sock.getpeercert(binary_form=True)
        assert der is not None
        return der
    finally:
        connection.close()


def der(leaf: trustme.LeafCert) -> bytes:
    return ssl.PEM_cert_to_DER_cert(leaf.cert_chain_pems[0].bytes().decode())


def replace(path: Path, data: bytes) -> None:
    """Write as a careful tool does: a new file renamed over the old one."""
    temporary = path.with_suffix(".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def install(certs: Certs, leaf: trustme.LeafCert, *, key: bool = True, cert: bool = True) -> None:
    if key:
        replace(certs.cert_dir / "tls.key", leaf.private_key_pem.bytes())
    if cert:
        chain = b"".join(p.bytes() for p in leaf.cert_chain_pems)
        replace(certs.cert_dir / "tls.crt", chain)


def events(webhook: TlsWebhook, name: str) -> int:
    return sum(1 for e in webhook.log_events() if e["event"] == name)


def test_a_rotated_certificate_is_served_to_new_connections(webhook: TlsWebhook) -> None:
    old_ca = webhook.certs.ca
    webhook.connection.request("GET", "/healthz")  # a keep-alive connection opened before
    assert webhook.read(webhook.connection)[0] == 200
    new_ca = trustme.CA()
    leaf = new_ca.issue_cert("localhost", "127.0.0.1")
    install(webhook.certs, leaf)
    assert served(webhook, new_ca) == der(leaf)
    with pytest.raises(ssl.SSLCertVerificationError):
        served(webhook, old_ca)
    assert webhook.post(VALIDATE_OK[0], VALIDATE_OK[1])[0] == 200  # the old connection lives on
    assert events(webhook, "certificate-reloaded") == 1


def test_a_half_written_pair_keeps_the_old_certificate_until_the_pair_matches(
    webhook: TlsWebhook,
) -> None:
    old_ca = webhook.certs.ca
    first = served(webhook, old_ca)
    new_ca = trustme.CA()
    leaf = new_ca.issue_cert("localhost", "127.0.0.1")
    install(webhook.certs, leaf, key=False)  # the certificate is there, its key is not yet
    for _ in range(3):
        assert served(webhook, old_ca) == first
    assert events(webhook, "certificate-reload-failed") == 1  # once per state of the files
    install(webhook.certs, leaf, cert=False)
    assert served(webhook, new_ca) == der(leaf)


def test_a_truncated_or_missing_file_keeps_the_old_certificate(webhook: TlsWebhook) -> None:
    ca = webhook.certs.ca
    first = served(webhook, ca)
    crt = webhook.certs.cert_dir / "tls.crt"
    whole = crt.read_bytes()
    crt.write_bytes(whole[: len(whole) // 2])  # in place, as a naive copy is caught mid-way
    assert served(webhook, ca) == first
    crt.unlink()
    assert served(webhook, ca) == first
    assert events(webhook, "certificate-reload-failed") == 2
    leaf = webhook.certs.issue()  # the same CA issues a fresh pair: served from now on
    assert served(webhook, ca) == der(leaf)


def test_a_rewrite_in_place_within_one_clock_tick_is_still_seen(webhook: TlsWebhook) -> None:
    """Same inode, same size, possibly the same mtime: the content hash tells them apart."""
    ca = webhook.certs.ca
    for _ in range(3):
        leaf = webhook.certs.issue()  # write_bytes: in place, sizes equal for one CA
        assert served(webhook, ca) == der(leaf)


def test_the_same_content_written_again_is_not_a_rotation(webhook: TlsWebhook) -> None:
    ca = webhook.certs.ca
    first = served(webhook, ca)
    for name in ("tls.crt", "tls.key"):
        path = webhook.certs.cert_dir / name
        replace(path, path.read_bytes())  # a new inode and mtime, the same bytes
    assert served(webhook, ca) == first
    assert webhook.server.certs.loaded == 1
    assert events(webhook, "certificate-reloaded") == 0


def test_a_kubernetes_secret_volume_swap_is_followed(tmp_path: Path) -> None:
    """A Secret volume: files are links through ``..data``, which is swapped atomically."""
    mount = tmp_path / "mount"
    mount.mkdir()
    first = Certs(tmp_path / "v1")
    (mount / "..data").symlink_to(first.cert_dir)
    for name in ("tls.crt", "tls.key"):
        (mount / name).symlink_to(Path("..data") / name)
    with TlsWebhook(tmp_path / "unused") as webhook:
        webhook.server.certs.cert_dir = mount
        assert served(webhook, first.ca)
        second = Certs(tmp_path / "v2")
        swap = mount / "..data_tmp"
        swap.symlink_to(second.cert_dir)
        os.replace(swap, mount / "..data")
        assert served(webhook, second.ca)


def test_without_a_loadable_pair_the_server_does_not_start(tmp_path: Path) -> None:
    with pytest.raises(CertificateError, match=r"certs: tls\.crt not found"):
        create_server(default_admission(), tmp_path / "certs", 0, JsonLog(), host="127.0.0.1")
    certs = Certs(tmp_path / "certs")
    (certs.cert_dir / "tls.key").write_bytes(trustme.CA().issue_cert("x").private_key_pem.bytes())
    with pytest.raises(CertificateError, match=r"cannot load tls\.crt and tls\.key: "):
        create_server(default_admission(), certs.cert_dir, 0, JsonLog(), host="127.0.0.1")
