"""Replacing a file so that a crash at any moment leaves either the old or the new content.

Both the fake cluster's state file and the suggestion service's state on its volume need it: the
data goes to a temporary file in the same directory, is flushed and ``fsync``-ed, replaces the
old file with ``os.replace`` (atomic on POSIX), and the directory is ``fsync``-ed so that the
rename itself survives a power cut. Until the rename the previous file is untouched; a failure
removes the temporary file and re-raises.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> None:
    descriptor, temporary = _temporary(path)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    fsync_directory(path.parent)


def _temporary(path: Path) -> tuple[int, str]:
    """A new temporary file next to ``path``; the directory is created only when missing (it
    is there for every save but the first, and asking to create it again costs a failed
    ``mkdir`` per directory level)."""
    prefix = f".{path.name}."
    try:
        return tempfile.mkstemp(prefix=prefix, dir=path.parent)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return tempfile.mkstemp(prefix=prefix, dir=path.parent)


def fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
