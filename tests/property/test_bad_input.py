"""Fuzzing the command line with malformed Experiments and configs: an exit status, never a crash.

Inputs are the shipped example with one field replaced by arbitrary JSON-like data, and arbitrary
documents; whatever they are, ``katib-resume`` answers with exit 0, 1 (denied) or 2 (bad input,
one line on stderr) and never lets an exception escape.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from katib_resume.app.cli.main import main
from tests.support.documents import paths

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = yaml.safe_load((ROOT / "examples" / "from-volume-resume.yaml").read_text())
CONFIG = yaml.safe_load((ROOT / "tests" / "data" / "katib-config.yaml").read_text())

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(), st.text(max_size=12)
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def mutate(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    changed = copy.deepcopy(document)
    node = changed
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return changed


EXAMPLE_PATHS, CONFIG_PATHS = paths(EXAMPLE), paths(CONFIG)


def answer(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    try:
        status = main(args)
    except SystemExit as stop:  # argparse's own usage errors
        status = stop.code if isinstance(stop.code, int) else 2
    err = capsys.readouterr().err
    assert status in (0, 1, 2)
    if status == 2:
        assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


SETTINGS = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(path=st.sampled_from(EXAMPLE_PATHS), value=values)
def test_a_mutated_experiment_is_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: tuple[Any, ...], value: Any
) -> None:
    target = tmp_path / "e.yaml"
    target.write_text(yaml.safe_dump(mutate(EXAMPLE, path, value)))
    answer(capsys, ["plan", "-f", str(target)])
    answer(
        capsys,
        [
            "validate",
            "-f",
            str(target),
            "--old",
            str(ROOT / "examples" / "from-volume-resume.yaml"),
        ],
    )


@SETTINGS
@given(path=st.sampled_from(CONFIG_PATHS), value=values)
def test_a_mutated_katib_config_is_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: tuple[Any, ...], value: Any
) -> None:
    target = tmp_path / "c.yaml"
    target.write_text(yaml.safe_dump(mutate(CONFIG, path, value)))
    answer(
        capsys,
        ["plan", "-f", str(ROOT / "examples" / "from-volume-resume.yaml"), "--config", str(target)],
    )


@SETTINGS
@given(text=st.text(max_size=200) | values.map(yaml.safe_dump))
def test_any_text_is_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    target = tmp_path / "e.yaml"
    target.write_text(text)
    answer(capsys, ["plan", "-f", str(target)])
