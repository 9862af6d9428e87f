"""The mutating webhook's answer: a JSON Patch (RFC 6902) from the object to its defaulted form.

The API server applies the patch to the object it sent, so the patch names only what defaulting
changed: a field set where it was absent (``add``) or null (``replace``), an item added to a list
(a metric strategy), a field inside a list item (a parameter's ``distribution``). Unchanged
fields are never rewritten, so whatever the models do not read (and a newer Katib's fields)
passes untouched.

The differ is ``jsonpatch`` (python-json-patch), the reference implementation for Python: it
compares values as JSON does (``1``, ``1.0`` and ``true`` are three values), escapes keys as
JSON Pointers, and for any two JSON documents answers a patch that turns one into the other
(it may ``move`` list items; the API server applies every RFC 6902 operation).
"""

from __future__ import annotations

from typing import Any

import jsonpatch

from katib_resume.core.manifest import Manifest


def json_patch(old: Any, new: Any) -> list[Manifest]:
    """Operations turning ``old`` into ``new`` (both JSON values); empty when they are equal."""
    return list(jsonpatch.make_patch(old, new).patch)
