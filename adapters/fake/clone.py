"""Private copies of stored objects: every read of the fake API server hands one out."""

from __future__ import annotations

import marshal
import pickle
from typing import Any, TypeVar, cast

from katib_resume.adapters.fake.lazy import plain

T = TypeVar("T")


def clone(obj: T) -> T:
    """A deep copy of JSON-like data, which matters because every read hands out a copy (a
    caller can never mutate the cluster).

    ``marshal`` copies plain dicts, lists, strings and numbers (all a stored object holds)
    about twice as fast as ``pickle``, and ``pickle`` about 3.5x as fast as ``deepcopy``;
    anything ``marshal`` refuses (a ``str`` enum in a caller's manifest, a ``datetime``) is
    copied by ``pickle``. Both keep shared parts shared, as ``deepcopy`` does.
    """
    obj = plain(obj)  # a stored object (``lazy.py``): ``marshal`` takes plain dicts only
    try:
        data = marshal.dumps(cast(Any, obj))  # refuses what it cannot copy exactly
    except ValueError:
        copied: T = pickle.loads(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))
        return copied
    return cast(T, marshal.loads(data))
