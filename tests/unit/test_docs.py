"""The documentation stays true to the code: generated diagrams, commands and figures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from katib_resume.core.lifecycle import LIFECYCLES

ROOT = Path(__file__).resolve().parents[2]


def mermaid_blocks(path: Path) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```", path.read_text(), flags=re.DOTALL)


@pytest.mark.parametrize("name", ["suggestion", "experiment", "trial"])
def test_lifecycle_doc_embeds_the_generated_diagram(name: str) -> None:
    assert LIFECYCLES[name].diagram() in mermaid_blocks(ROOT / "docs" / "lifecycle.md")
