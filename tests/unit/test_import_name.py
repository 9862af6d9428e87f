"""One import name: nothing in the repository imports a bare ``core``, ``adapters`` or ``app``.

Installed, the distribution holds ``katib_resume`` alone; a bare import would work from a
checkout (the folders sit at its top) and break, or shadow another project's package, once
installed.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BARE = {"core", "adapters", "app"}
SKIPPED = {".git", ".venv", ".venv-ci", "katib_resume", "build"}


def imported_names(tree: ast.AST) -> list[str]:
    """Every absolute module an ``import`` or ``from ... import`` statement names."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_no_module_imports_a_bare_top_level_folder() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in ROOT.rglob("*.py")
        if not SKIPPED & set(path.relative_to(ROOT).parts)
        for name in imported_names(ast.parse(path.read_text(encoding="utf-8")))
        if name.split(".")[0] in BARE
    ]
    assert offenders == []


def test_the_package_maps_the_design_cards_folders() -> None:
    for folder in sorted(BARE):
        assert (ROOT / "katib_resume" / folder).resolve() == (ROOT / folder).resolve()
