"""The objects a writing command acts on: named on the command line, or described by a file.

``delete`` takes what ``get`` takes (``KIND NAME...``, ``KIND/NAME...``) or ``-f FILE``: one
object, or a ``v1 List`` of them (``get -o yaml`` prints one), each found by its kind,
``apiVersion``, name and namespace. The namespace is the object's own; ``-n`` fills it in when
the file has none, and must agree with it when it has one, as kubectl requires.
"""

from __future__ import annotations

from collections.abc import Sequence

from katib_resume.app.cli.kinds import ALIASES, Resource, targets
from katib_resume.app.common.errors import InputError
from katib_resume.app.common.inputs import read_yaml
from katib_resume.app.embedded.driver import DEFAULT_NAMESPACE

Chosen = list[tuple[Resource, str, str]]
"""(resource, namespace, name) in the order given."""


def named_targets(words: Sequence[str], ns: str) -> Chosen:
    chosen: Chosen = []
    for target in targets(words):
        if not target.names:
            raise InputError(
                f"a {target.resource.kind.lower()} to delete needs a NAME, -l SELECTOR "
                "or -f FILE; deleting every one of a kind is not offered"
            )
        chosen += [(target.resource, ns, name) for name in target.names]
    return chosen


def file_targets(path: str, ns: str | None) -> Chosen:
    document = read_yaml(path)
    items = document.get("items") if isinstance(document, dict) else None
    objects = items if _is_list(document) and isinstance(items, list) else [document]
    chosen = [_target(path, obj, ns) for obj in objects]
    if not chosen:
        raise InputError(f"{path}: no objects to delete")
    return chosen


def _is_list(document: object) -> bool:
    return isinstance(document, dict) and document.get("kind") == "List"


def _target(path: str, obj: object, ns: str | None) -> tuple[Resource, str, str]:
    if not isinstance(obj, dict):
        raise InputError(f"{path}: expected a mapping (an object), found {type(obj).__name__}")
    kind, version = obj.get("kind"), obj.get("apiVersion")
    resource = ALIASES.get(str(kind).lower())
    if resource is None or resource.kind != kind or resource.api_version != version:
        raise InputError(f"{path}: no kind {kind!r} (apiVersion {version!r}) in this cluster")
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        raise InputError(f"{path}: a {kind} without metadata.name")
    own = meta.get("namespace") if isinstance(meta, dict) else None
    if ns and own and ns != own and resource.namespaced:
        raise InputError(
            f'{path}: the namespace from the provided object "{own}" does not match the '
            f'namespace "{ns}": remove -n or change the file'
        )
    return resource, str(own or ns or DEFAULT_NAMESPACE), name
