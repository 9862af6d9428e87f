"""Every name a core module exports in ``__all__`` exists (a star import or a documentation tool
reads the list; a stale entry fails there, far from the typo)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import katib_resume.core

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(katib_resume.core.__path__, "katib_resume.core.")
)


@pytest.mark.parametrize("name", MODULES)
def test_every_exported_name_exists(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", ())
    assert [n for n in exported if not hasattr(module, n)] == []
    assert len(set(exported)) == len(exported)


def test_the_packages_export_their_lists() -> None:
    exporting = [n for n in MODULES if hasattr(importlib.import_module(n), "__all__")]
    assert {
        "katib_resume.core.lifecycle",
        "katib_resume.core.model",
        "katib_resume.core.plan",
    } <= set(exporting)
