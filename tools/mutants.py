"""The mutants of one module: small AST changes that a test suite should notice.

Each mutant is one change at one place, named by a stable id ``<path>:<line>:<col>:<operator>``
(``tools/mutate.py`` runs them). The operators are the ones that change what the core decides:

* ``cmp``: a comparison flipped to its neighbour (``<`` and ``<=``, ``==`` and ``!=``, ``is``
  and ``is not``, ``in`` and ``not in``): the boundaries (a 30 s grace, a 253-character limit);
* ``and-or``: ``and`` for ``or`` and back;
* ``not``: ``not x`` as ``x``;
* ``num``: a number plus one; ``bool``: ``True`` and ``False`` swapped;
* ``str``: a string (not a docstring) with ``XX`` in front: the message texts, names, reasons;
* ``return``: a ``return`` inside an ``if`` dropped (its value is computed and the function
  goes on), as if a branch forgot to stop;
* ``call``: a call made for its effect (``found.append(...)``) removed.

Type annotations are never mutated (they change nothing at run time). The mutated module is
compiled from the changed tree with the original file name and line numbers, so a traceback of
a mutant points at the real source.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_ANNOTATION_FIELDS = ("annotation", "returns")


@dataclass(frozen=True, slots=True)
class Mutant:
    path: str
    line: int
    col: int
    operator: str
    detail: str
    index: int
    """Position among the module's mutants (how ``mutated`` finds it again)."""
    nth: int = 0
    """Which of the mutants with the same place and operator (the parts of an f-string)."""

    @property
    def id(self) -> str:
        suffix = f".{self.nth}" if self.nth else ""
        return f"{self.path}:{self.line}:{self.col}:{self.operator}{suffix}"

    def __str__(self) -> str:
        return f"{self.id} {self.detail}"


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring nodes, and of the bare string statements beside fields."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                found.add(id(stmt.value))
    return found


def _skipped(tree: ast.Module) -> set[int]:
    """ids of nodes inside annotations (and the docstrings): never mutated."""
    skipped = _docstrings(tree)
    for node in ast.walk(tree):
        for name in _ANNOTATION_FIELDS:
            sub = getattr(node, name, None)
            if isinstance(sub, ast.AST):
                skipped.update(id(inner) for inner in ast.walk(sub))
        if isinstance(node, ast.AnnAssign):
            skipped.update(id(inner) for inner in ast.walk(node.annotation))
    return skipped


def _points(tree: ast.Module) -> Iterator[tuple[ast.AST, str, str, int]]:
    """(node, operator, detail, which) for every mutation point, in a fixed order."""
    skipped = _skipped(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        yield from _node_points(node)


def _node_points(node: ast.AST) -> Iterator[tuple[ast.AST, str, str, int]]:
    if isinstance(node, ast.Compare):
        for which, op in enumerate(node.ops):
            if type(op) in SWAPS:
                swap = SWAPS[type(op)]
                yield node, "cmp", f"{type(op).__name__} -> {swap.__name__}", which
    elif isinstance(node, ast.BoolOp):
        yield node, "and-or", type(node.op).__name__, 0
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield node, "not", "not x -> x", 0
    elif isinstance(node, ast.Constant):
        yield from _constant_points(node)
    yield from _statement_points(node)


def _constant_points(node: ast.Constant) -> Iterator[tuple[ast.AST, str, str, int]]:
    value = node.value
    if isinstance(value, bool):
        yield node, "bool", f"{value} -> {not value}", 0
    elif isinstance(value, int | float):
        yield node, "num", f"{value} -> {value + 1}", 0
    elif isinstance(value, str):
        yield node, "str", f"{value[:30]!r} -> 'XX...'", 0


def _statement_points(node: ast.AST) -> Iterator[tuple[ast.AST, str, str, int]]:
    if isinstance(node, ast.If):
        for which, stmt in enumerate(node.body):
            if isinstance(stmt, ast.Return):
                yield node, "return", f"return dropped (line {stmt.lineno})", which
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        for which, stmt in enumerate(block if isinstance(block, list) else ()):
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                yield node, "call", f"call removed (line {stmt.lineno})", _call_key(field, which)


def _call_key(field: str, which: int) -> int:
    return ("body", "orelse", "finalbody").index(field) * 10_000 + which


def mutants(path: Path, root: Path) -> list[Mutant]:
    """Every mutant of the module at ``path`` (its id relative to ``root``)."""
    tree = ast.parse(path.read_text(), str(path))
    rel = str(path.relative_to(root))
    found = []
    seen: dict[tuple[int, int, str], int] = {}
    for index, (node, operator, detail, _) in enumerate(_points(tree)):
        line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
        nth = seen[line, col, operator] = seen.get((line, col, operator), -1) + 1
        found.append(Mutant(rel, line, col, operator, detail, index, nth))
    return found


def mutated(path: Path, index: int) -> ast.Module:
    """The module's tree with mutant ``index`` applied."""
    tree = ast.parse(path.read_text(), str(path))
    for position, (node, operator, _, which) in enumerate(_points(tree)):
        if position == index:
            _apply(node, operator, which)
            return ast.fix_missing_locations(tree)
    raise IndexError(f"{path} has no mutant {index}")


def _apply(node: ast.AST, operator: str, which: int) -> None:
    if isinstance(node, ast.Compare):
        node.ops[which] = SWAPS[type(node.ops[which])]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.UnaryOp):
        _replace_with(node, node.operand)
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            node.value = not value
        elif isinstance(value, int | float):
            node.value = value + 1
        else:
            node.value = "XX" + str(value)
    elif operator == "return":
        _drop_return(node, which)
    else:
        _drop_call(node, which)


def _replace_with(node: ast.AST, other: ast.AST) -> None:
    """Turn ``node`` into a copy of ``other`` in place (its parent keeps pointing at it)."""
    node.__class__ = other.__class__
    node.__dict__.clear()
    node.__dict__.update(copy.copy(other).__dict__)


def _drop_return(node: ast.AST, which: int) -> None:
    assert isinstance(node, ast.If)
    stmt = node.body[which]
    assert isinstance(stmt, ast.Return)
    node.body[which] = ast.Expr(stmt.value) if stmt.value is not None else ast.Pass()
    ast.copy_location(node.body[which], stmt)


def _drop_call(node: ast.AST, key: int) -> None:
    field, which = ("body", "orelse", "finalbody")[key // 10_000], key % 10_000
    body = getattr(node, field)
    body[which] = ast.copy_location(ast.Pass(), body[which])
