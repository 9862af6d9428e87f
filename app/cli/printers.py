"""``get``'s ``-o``: a table per kind, ``wide``, ``json``/``yaml``, ``name``, ``jsonpath=...``.

As kubectl prints them: with several kinds asked for (``get pvc,pv``) each kind has its own
table, separated by a blank line, and names read ``kind/name`` so that the tables can be told
apart; ``json``, ``yaml`` and ``jsonpath`` see the one object when one NAME was asked for and a
``v1 List`` of everything otherwise; ``jsonpath`` prints no newline of its own, as kubectl's
does not. No object for a table is ``No resources found`` on stderr (the other outputs print
an empty result), exit status 0.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import datetime

from katib_resume.app.cli.kinds import Resource
from katib_resume.app.cli.tables import rows
from katib_resume.app.cli.template import Template, TemplateError, compile_template
from katib_resume.app.common.errors import RequestError
from katib_resume.app.common.output import as_list, render, table
from katib_resume.core.manifest import Manifest

Groups = Sequence[tuple[Resource, Sequence[Manifest]]]
JSONPATH = "jsonpath="


def print_objects(
    groups: Groups,
    output: str | None,
    now: datetime,
    ns: str | None,
    *,
    single: bool,
    missing: bool = False,
) -> None:
    """Print what was found, as ``-o`` asks (``None``: tables); ``missing``: a name asked for
    was not found (its error says so; "No resources found" would only repeat it)."""
    template = _template(output)  # before anything is printed: a bad one prints nothing
    objects = [obj for _, found in groups for obj in found]
    if output == "name":
        sys.stdout.write("".join(f"{r.name_of(_name(o))}\n" for r, found in groups for o in found))
    elif output in ("json", "yaml") or template is not None:
        if objects or not single:  # the one object asked for missing: its NotFound says it
            document = objects[0] if single else as_list(objects)
            sys.stdout.write(_document(document, str(output), template))
    elif objects:
        sys.stdout.write(tables(groups, now, ns, wide=output == "wide"))
    elif not missing:
        namespaced = any(resource.namespaced for resource, _ in groups)
        where = f" in {ns} namespace" if ns is not None and namespaced else ""
        print(f"No resources found{where}.", file=sys.stderr)


def _document(document: Manifest, output: str, template: Template | None) -> str:
    if template is None:
        return render(document, output)
    try:
        return template.render(document)
    except TemplateError as error:
        raise RequestError(str(error)) from None


def _template(output: str | None) -> Template | None:
    if output is None or not output.startswith(JSONPATH):
        return None
    try:
        return compile_template(output[len(JSONPATH) :])
    except TemplateError as error:
        raise RequestError(str(error)) from None


def tables(groups: Groups, now: datetime, ns: str | None, *, wide: bool) -> str:
    """One table per kind that has objects; names as ``kind/name`` when several kinds."""
    shown = [(resource, found) for resource, found in groups if found]
    texts = []
    for resource, found in shown:
        headers, cells = rows(resource, found, now, wide=wide, namespaces=ns is None)
        if len(groups) > 1 and "NAME" in headers:
            column = headers.index("NAME")
            for row, obj in zip(cells, found, strict=True):
                row[column] = resource.name_of(_name(obj))
        texts.append(table(headers, cells))
    return "\n".join(texts)


def _name(obj: Manifest) -> str:
    return str(obj["metadata"]["name"])
