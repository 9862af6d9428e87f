"""``adapters.local.trials.group``: what a killed run left is stopped, a recycled pid never is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from katib_resume.adapters.local.trials import group
from tests.support.pids import alive, gone_soon

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def leader_with_grandchild() -> tuple[subprocess.Popen[str], int]:
    """A session leader that starts a sleeper in its group, prints its pid and waits for stdin."""
    leader = subprocess.Popen(
        ["sh", "-c", "sleep 60 >/dev/null & echo $!; read _"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert leader.stdout is not None
    return leader, int(leader.stdout.readline())


def test_a_group_whose_leader_died_is_still_stopped(tmp_path: Path) -> None:
    leader, grandchild = leader_with_grandchild()
    group.remember(tmp_path, leader.pid)
    assert leader.stdin is not None
    leader.stdin.close()  # `read` ends, so does the leader (reaped); its sleeper stays
    leader.wait(timeout=10)
    assert alive(grandchild)
    group.reap_leftover(tmp_path)
    assert gone_soon(grandchild)
    assert not (tmp_path / group.PID_FILE).exists()


def test_a_live_leader_and_its_group_are_stopped(tmp_path: Path) -> None:
    leader, grandchild = leader_with_grandchild()
    group.remember(tmp_path, leader.pid)
    group.reap_leftover(tmp_path)
    leader.wait(timeout=10)
    assert gone_soon(grandchild)


def test_a_recycled_pid_is_never_killed(tmp_path: Path) -> None:
    leader, grandchild = leader_with_grandchild()
    (tmp_path / group.PID_FILE).write_text(f"{leader.pid} 1\n")  # started at another time
    try:
        group.reap_leftover(tmp_path)
        assert alive(leader.pid) and alive(grandchild)
    finally:
        group.kill_group(leader.pid)
        leader.wait(timeout=10)
