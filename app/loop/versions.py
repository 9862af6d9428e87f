"""Objects' names and versions read in bulk: a restart matches thousands of cached objects
against what an earlier command kept of them in one C-level pass.

What a command keeps for the next one (the trial ledger's records, the result book's entries,
the Trials found settled: ``app.embedded.kept``) is valid for one state of one object, named by
its namespace, name and ``resourceVersion``. ``seen_of`` reads those three of every object with
``map`` over ``operator`` getters (no Python frame per object), so that a restart checks its
whole history against a kept set with a set's look-ups and ``itertools.compress``, and spends
Python code only on the objects that changed since.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter, methodcaller

from katib_resume.core.manifest import Manifest

Seen = tuple[str | None, str, str | None]
"""An object's namespace, name and ``resourceVersion``, as its metadata holds them."""

_META, _NAME = itemgetter("metadata"), itemgetter("name")
_NAMESPACE, _VERSION = methodcaller("get", "namespace"), methodcaller("get", "resourceVersion")


def seen_of(objects: Sequence[Manifest]) -> list[Seen]:
    """Each object's (namespace, name, ``resourceVersion``)."""
    metas = list(map(_META, objects))
    return list(zip(map(_NAMESPACE, metas), map(_NAME, metas), map(_VERSION, metas), strict=True))
