"""``-o jsonpath=TEMPLATE``: kubectl's JSONPath templates, over the ``python-jsonpath`` library.

kubectl's template is text with actions in braces: ``{.items[*].metadata.name}`` (a path,
relative to the object printed, ``$`` optional), ``{"\\n"}`` (a quoted literal, with escapes),
and ``{range .items[*]}...{end}`` (the body once per result, each as the root of its paths).
Text outside braces is printed as it is. An action's results are printed separated by spaces:
strings as they are, numbers and booleans as kubectl prints them, maps and lists as compact
JSON; a path that finds nothing prints nothing, as kubectl's default
``--allow-missing-template-keys`` does.

The path expressions themselves (filters ``[?(@.type=="Succeeded")]``, slices ``[-1:]``,
recursive descent ``..``) are evaluated by ``python-jsonpath`` (RFC 9535, typed, maintained):
only the template around them, a few lines, is kubectl's own and is written here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jsonpath import CompoundJSONPath, JSONPath

_ACTION = re.compile(r"\{((?:[^{}\"']|\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')*)\}", re.S)
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'", re.S)


class TemplateError(ValueError):
    """The template does not parse: the message names the action and the problem."""


@dataclass(frozen=True, slots=True)
class Query:
    """A compiled path; ``expression`` is kept to tell the root (``$``, ``@``) from the rest."""

    expression: str
    compiled: JSONPath | CompoundJSONPath

    def results(self, document: object) -> list[object]:
        """The values found; the library reads a ``str`` as JSON text, so a scalar (a range
        over names) is matched here: it is its own root and has no fields."""
        import jsonpath

        if not isinstance(document, dict | list):
            return [document] if self.expression == "$" else []
        try:
            return self.compiled.findall(document)
        except jsonpath.JSONPathError as error:  # a type or recursion limit met in the data
            reason = str(error).splitlines()[0]
            raise TemplateError(f"error executing jsonpath {self.expression}: {reason}") from None


@dataclass(frozen=True, slots=True)
class Range:
    query: Query
    body: tuple[Node, ...]


Node = str | Query | Range


@dataclass(frozen=True, slots=True)
class Template:
    nodes: tuple[Node, ...]

    def render(self, document: object) -> str:
        return _render(self.nodes, document)


def compile_template(text: str) -> Template:
    """Parse ``text``; ``TemplateError`` if a brace is unclosed, a range has no end, or a path
    does not parse."""
    stack: list[list[Node]] = [[]]
    ranges: list[Query] = []
    position = 0
    for action in _ACTION.finditer(text):
        _literal(text[position : action.start()], stack[-1], text)
        position = action.end()
        inside = action.group(1).strip()
        if inside.startswith("range ") or inside == "range":
            ranges.append(_query(inside[len("range") :].strip(), text))
            stack.append([])
        elif inside == "end":
            if len(stack) == 1:
                raise TemplateError(f"error parsing jsonpath {text}: {{end}} without {{range}}")
            body = tuple(stack.pop())
            stack[-1].append(Range(ranges.pop(), body))
        elif _QUOTED.fullmatch(inside):
            stack[-1].append(_unquote(inside))
        else:
            stack[-1].append(_query(inside, text))
    _literal(text[position:], stack[-1], text)
    if len(stack) > 1:
        raise TemplateError(f"error parsing jsonpath {text}: {{range}} without {{end}}")
    return Template(tuple(stack[0]))


def _literal(piece: str, into: list[Node], text: str) -> None:
    if "{" in piece or "}" in piece:
        raise TemplateError(f"error parsing jsonpath {text}: unclosed action")
    if piece:
        into.append(piece)


def _query(expression: str, text: str) -> Query:
    import jsonpath  # only when a template is given: the library is not needed otherwise

    if not expression:
        raise TemplateError(f"error parsing jsonpath {text}: an empty action")
    if expression.startswith("@"):
        expression = "$" + expression[1:]
    elif not expression.startswith("$"):
        expression = "$" + ("" if expression[0] in ".[" else ".") + expression
    try:
        return Query(expression, jsonpath.compile(expression))
    except jsonpath.JSONPathError as error:
        reason = str(error).splitlines()[0]
        raise TemplateError(f"error parsing jsonpath {text}: {reason}") from None


def _unquote(quoted: str) -> str:
    """A quoted literal, with JSON's escapes (``\\n``, ``\\t``, ``\\"``)."""
    body = quoted[1:-1]
    if quoted[0] == "'":
        body = body.replace('\\"', '"').replace("\\'", "'").replace('"', '\\"')
    try:
        return str(json.loads(f'"{body}"'))
    except json.JSONDecodeError:
        return body


def _render(nodes: tuple[Node, ...], document: object) -> str:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, Query):
            out.append(" ".join(map(text_of, node.results(document))))
        else:
            out += [_render(node.body, item) for item in node.query.results(document)]
    return "".join(out)


def text_of(value: object) -> str:
    """A result as kubectl prints it: JSON for maps and lists, plain text for the rest."""
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "<nil>" if value is None else str(value)
