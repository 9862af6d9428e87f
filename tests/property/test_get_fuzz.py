"""Fuzzing ``get``'s ``-l`` and ``-o jsonpath=`` with arbitrary text: an answer, never a crash.

Whatever the selector or the template, ``katib-resume get`` over a completed run answers with
exit 0, 1 (kubectl's status for a selector or template that does not parse) or 2 (bad input),
one line on stderr when it refuses, and never lets an exception escape. The text is drawn from
the characters the two grammars give meaning to, so that most draws get deep into the parsers.
"""

from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from katib_resume.app.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-volume-resume.yaml"
SETTINGS = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
SELECTOR_PIECES = [*"ab/.-_=!(), ", "in", "notin", "katib"]
TEMPLATE_PIECES = [*"{}[]().*@$?:,'\"\\ -=<>!1", "items", "metadata", "name", "range", "end"]
selector_text = st.lists(st.sampled_from(SELECTOR_PIECES), max_size=16).map("".join)
template_text = st.lists(st.sampled_from(TEMPLATE_PIECES), max_size=24).map("".join)


def answer(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as stop:  # argparse's own errors
            code = stop.code if isinstance(stop.code, int) else 2
    return code, err.getvalue()


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    state = tmp_path_factory.mktemp("fuzz") / "state"
    assert answer("run", "-f", str(EXAMPLE), "--state-dir", str(state))[0] == 0
    return state


def assert_answered(code: int, err: str) -> None:
    assert code in (0, 1, 2)
    assert "Traceback" not in err
    if code:
        assert len(err.strip().splitlines()) == 1, err


@SETTINGS
@given(text=selector_text)
def test_any_selector_is_answered(state: Path, text: str) -> None:
    assert_answered(*answer("get", "trials,pv", "-A", "-l", text, "--state-dir", str(state)))


@SETTINGS
@given(text=template_text)
def test_any_jsonpath_template_is_answered(state: Path, text: str) -> None:
    output = f"jsonpath={text}"
    assert_answered(
        *answer("get", "trials", "-n", "kubeflow", "-o", output, "--state-dir", str(state))
    )
