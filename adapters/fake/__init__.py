"""An in-memory Kubernetes and clock implementing the core's ports (public: embedders' tests)."""

from adapters.fake.clock import FakeClock
from adapters.fake.cluster import Event, FakeCluster

__all__ = ["Event", "FakeClock", "FakeCluster"]
