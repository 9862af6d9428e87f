"""Fixtures of the integration tests: one mock API server per module, clean namespaces."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.support.kube_mock import MockServer, mock_server

_namespaces = itertools.count(1)


@pytest.fixture(scope="module")
def kube() -> Iterator[MockServer]:
    """kmock, filled in (``tests.support.kube_mock``), on its own thread."""
    with mock_server() as server:
        yield server


@pytest.fixture
def namespace() -> str:
    """A namespace no other test uses, so tests sharing one server never see each other."""
    return f"test-{next(_namespaces)}"
