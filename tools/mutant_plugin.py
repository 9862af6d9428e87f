"""A pytest plugin that loads one module as one of its mutants (``tools/mutate.py`` sets it up).

``install`` (or, loaded as ``pytest -p tools.mutant_plugin``, the environment's
``MUTANT_PATH``, a module's file relative to the repository, and ``MUTANT_INDEX``, which of its
mutants in ``tools/mutants.py``) puts an import finder first on ``sys.meta_path`` before any
test imports the project, so the module is compiled from the
mutated tree in memory: no file is ever changed, so an interrupted run leaves the tree as it
was, and two runs never see each other's mutants.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from tools.mutants import mutated

ROOT = Path(__file__).resolve().parent.parent


def module_name(path: str) -> str:
    """``core/plan/marks.py`` -> ``katib_resume.core.plan.marks``."""
    parts = list(Path(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["katib_resume", *parts])


class _MutantLoader(importlib.abc.Loader):
    def __init__(self, path: Path, index: int) -> None:
        self.path, self.index = path, index

    def exec_module(self, module: ModuleType) -> None:
        code = compile(mutated(self.path, self.index), str(self.path), "exec")
        exec(code, module.__dict__)  # the point: run the mutated module


class _MutantFinder(importlib.abc.MetaPathFinder):
    def __init__(self, name: str, path: Path, index: int) -> None:
        self.name, self.path, self.index = name, path, index

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        package = self.path.name == "__init__.py"
        loader = _MutantLoader(self.path, self.index)
        spec = importlib.machinery.ModuleSpec(
            fullname, loader, origin=str(self.path), is_package=package
        )
        spec.has_location = True
        if package:
            spec.submodule_search_locations = [str(self.path.parent)]
        return spec


def install(relative: str, index: int) -> None:
    """Load the module at ``relative`` (to the repository) as its mutant ``index`` from now on."""
    name = module_name(relative)
    if name in sys.modules:
        raise RuntimeError(f"{name} was imported before the mutant could be installed")
    sys.meta_path.insert(0, _MutantFinder(name, ROOT / relative, index))


if os.environ.get("MUTANT_PATH"):  # loaded by ``pytest -p tools.mutant_plugin``
    install(os.environ["MUTANT_PATH"], int(os.environ["MUTANT_INDEX"]))
