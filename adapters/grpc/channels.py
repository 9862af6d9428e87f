"""gRPC channels by endpoint: opened on first use, shared by every call, closed when idle.

A channel is a connection with its own reconnect logic, so one per suggestion service is kept
and reused (a new channel per call would pay a TCP handshake each time). A service goes away
when its Experiment completes, so a channel nobody has used for ``idle_seconds`` is closed
(checked whenever a channel is handed out); ``close`` closes them all at shutdown.

The reconnect backoff is short (at most ``MAX_RECONNECT_MS``): a channel that failed to connect
answers every call ``UNAVAILABLE`` at once until its next attempt, and gRPC's default of up to
two minutes would keep a freshly started suggestion service unreachable for that long.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import grpc

MAX_RECONNECT_MS = 2000
OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 250),
    ("grpc.min_reconnect_backoff_ms", 250),
    ("grpc.max_reconnect_backoff_ms", MAX_RECONNECT_MS),
)
IDLE_SECONDS = 300.0


class Channels:
    """Thread-safe: the controller's workers share one pool.

    ``idle_seconds`` must exceed the longest call's deadline, so that a channel is never closed
    under a call that is still using it.
    """

    def __init__(
        self, idle_seconds: float = IDLE_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.idle_seconds, self.clock = idle_seconds, clock
        self.lock = threading.Lock()
        self.open: dict[str, tuple[grpc.Channel, float]] = {}

    def get(self, endpoint: str) -> grpc.Channel:
        """The channel to ``endpoint`` (opened now if there is none)."""
        with self.lock:
            now = self.clock()
            for idle in [e for e, (_, used) in self.open.items() if now - used > self.idle_seconds]:
                if idle != endpoint:
                    self.open.pop(idle)[0].close()
            current = self.open.get(endpoint)
            channel = current[0] if current else grpc.insecure_channel(endpoint, options=OPTIONS)
            self.open[endpoint] = (channel, now)
            return channel

    def endpoints(self) -> list[str]:
        with self.lock:
            return sorted(self.open)

    def close(self) -> None:
        with self.lock:
            for channel, _ in self.open.values():
                channel.close()
            self.open.clear()
