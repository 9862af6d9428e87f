"""Per-connection deadlines, enforced from outside the connection's thread.

A socket timeout bounds each single read, not a request: a client that sends one byte every few
seconds (slowloris), or a TLS handshake that never finishes, would hold a thread forever. So
every connection gets a deadline when it is accepted, re-armed after each answer it receives;
one watchdog thread shuts down the socket of any connection past its deadline, which makes the
blocked read in its thread fail at once. The deadline covers the handshake, reading the request
and the admission decision; idle keep-alive connections end at it too (clients reconnect).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

TICK_SECONDS = 0.1


class Deadlines:
    def __init__(self) -> None:
        self._due: dict[socket.socket, float] = {}
        self._lock = threading.Lock()
        self._closing = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="webhook-deadlines", daemon=True)
        self._thread.start()

    def arm(self, conn: socket.socket, seconds: float) -> None:
        """Give ``conn`` until ``seconds`` from now; after ``expire_all``, end it at once."""
        with self._lock:
            if not self._closing:
                self._due[conn] = time.monotonic() + seconds
                return
        _cut(conn)

    def disarm(self, conn: socket.socket) -> None:
        with self._lock:
            self._due.pop(conn, None)

    def open_connections(self) -> int:
        with self._lock:
            return len(self._due)

    def expire_all(self) -> None:
        """End every open connection now, and any that finishes an answer later (shutdown)."""
        with self._lock:
            self._closing = True
            expired, self._due = list(self._due), {}
        for conn in expired:
            _cut(conn)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stopped.wait(TICK_SECONDS):
            now = time.monotonic()
            with self._lock:
                expired = [conn for conn, due in self._due.items() if due <= now]
                for conn in expired:
                    del self._due[conn]
            for conn in expired:
                _cut(conn)


def _cut(conn: socket.socket) -> None:
    """Shut the connection down at the socket level (not TLS: its thread is inside a read)."""
    with contextlib.suppress(OSError):  # already closed by its own thread
        socket.socket.shutdown(conn, socket.SHUT_RDWR)
