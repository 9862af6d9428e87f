"""The controller's probe and metrics server (``app.cluster.httpd``): routes, misses, failures."""

from __future__ import annotations

import http.client
from collections.abc import Iterator

import pytest

from katib_resume.app.cluster.httpd import TEXT, Answer, ProbeServer, parse_address


def broken() -> Answer:
    raise RuntimeError("cache gone")


@pytest.fixture
def probes() -> Iterator[http.client.HTTPConnection]:
    server = ProbeServer(("127.0.0.1", 0), {"/ok": lambda: (200, TEXT, b"ok\n"), "/x": broken})
    server.start()
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        yield connection
    finally:
        connection.close()
        server.shutdown()


def get(connection: http.client.HTTPConnection, path: str) -> tuple[int, str | None, bytes]:
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.getheader("Content-Type"), response.read()


def test_routes_misses_and_failures_on_one_keep_alive_connection(
    probes: http.client.HTTPConnection,
) -> None:
    assert get(probes, "/ok?verbose=1") == (200, TEXT, b"ok\n")
    assert get(probes, "/nowhere") == (404, TEXT, b"not found\n")
    assert get(probes, "/x") == (500, TEXT, b"RuntimeError: cache gone\n")
    assert get(probes, "/ok") == (200, TEXT, b"ok\n")


def test_a_taken_address_fails_at_once() -> None:
    first = ProbeServer(("127.0.0.1", 0), {}).start()
    try:
        with pytest.raises(OSError):
            ProbeServer(parse_address(first.url.removeprefix("http://")), {})
    finally:
        first.shutdown()
