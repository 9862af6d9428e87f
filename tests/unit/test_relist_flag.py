"""``controller --relist-seconds``: parsed, defaulted and handed to the controller's settings."""

from __future__ import annotations

import pytest

from katib_resume.app.cli.main import build_parser
from katib_resume.app.cluster.main import Settings
from katib_resume.app.common.wiring import RELIST_SECONDS


def _settings(*flags: str) -> Settings:
    return Settings.from_args(build_parser().parse_args(["controller", *flags]))


def test_the_relist_period_defaults_to_five_minutes_and_can_be_set() -> None:
    assert _settings().relist_seconds == RELIST_SECONDS == 300.0
    assert _settings("--relist-seconds", "60").relist_seconds == 60.0


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_a_relist_period_that_is_not_a_positive_number_is_refused(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        _settings("--relist-seconds", value)
    assert exited.value.code == 2
    assert "--relist-seconds" in capsys.readouterr().err
