"""``katib-resume webhook`` as a process: flags, start-up errors, serving, and a graceful SIGTERM.

Most cases start the command through its injectable ``connect`` (a fake cluster and Katib's
shipped katib-config); ``test_webhook_live.py`` runs it on the live adapters against kmock.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from katib_resume.app.cli.main import build_parser
from katib_resume.app.common.errors import InputError
from katib_resume.app.webhook.main import webhook
from tests.support.webhook import VALIDATE_OK, Certs, Client, shipped_config, world

ROOT = Path(__file__).resolve().parents[2]
SERVE_WITH_FAKES = textwrap.dedent(
    """
    import sys
    from katib_resume.app.cli.main import build_parser
    from katib_resume.app.webhook.main import webhook
    from tests.support.webhook import shipped_config, world

    args = build_parser().parse_args(sys.argv[1:])
    sys.exit(webhook(args, connect=lambda kubeconfig, config_map: (world(), shipped_config())))
    """
)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "katib_resume", *args]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, check=False, timeout=60
    )


def test_help_lists_the_flags() -> None:
    done = cli("webhook", "--help")
    assert done.returncode == 0
    for flag in ("--cert-dir DIR", "--port PORT", "--kubeconfig PATH", "--config-map NS/NAME"):
        assert flag in done.stdout


def test_parsing_the_command_imports_neither_kubernetes_nor_the_server() -> None:
    probe = (
        "import sys; from katib_resume.app.cli.main import build_parser; "
        "build_parser().parse_args(['webhook', '--cert-dir', 'x']); "
        "print(sorted(m for m in ('kubernetes', 'ssl', 'http.server', 'aiohttp', "
        "'katib_resume.app.webhook', 'pydantic') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--port", "70000"], "argument --port: must be at most 65535, got 70000"),
        (["--port", "https"], "argument --port: expected a whole number, got 'https'"),
        (["--config-map", "katib-config"], "expected NAMESPACE/NAME, got 'katib-config'"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(flags: list[str], message: str) -> None:
    done = cli("webhook", "--cert-dir", "certs", *flags)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.splitlines()) == 1


def test_the_flags_reach_the_connect_factory() -> None:
    seen: list[Any] = []

    class Stop(Exception):
        pass

    def connect(kubeconfig: str | None, config_map: tuple[str, str]) -> Any:
        seen.append((kubeconfig, config_map))
        raise Stop

    args = build_parser().parse_args(
        ["webhook", "--cert-dir", "c", "--kubeconfig", "kc", "--config-map", "ops/katib"]
    )
    with pytest.raises(Stop):
        webhook(args, connect=connect)
    defaults = build_parser().parse_args(["webhook", "--cert-dir", "c"])
    with pytest.raises(Stop):
        webhook(defaults, connect=connect)
    assert seen == [("kc", ("ops", "katib")), (None, ("kubeflow", "katib-config"))]
    assert defaults.port == 8443


def fakes(kubeconfig: str | None, config_map: tuple[str, str]) -> Any:
    return world(), shipped_config()


def test_start_up_problems_are_input_errors(tmp_path: Path) -> None:
    missing = build_parser().parse_args(["webhook", "--cert-dir", str(tmp_path / "none")])
    with pytest.raises(InputError, match=r"^--cert-dir .*/none: tls\.crt not found$"):
        webhook(missing, connect=fakes)
    Certs(tmp_path / "certs")
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        args = build_parser().parse_args(
            ["webhook", "--cert-dir", str(tmp_path / "certs"), "--port", port]
        )
        with pytest.raises(
            InputError, match=rf"^cannot listen on port {port}: Address already in use$"
        ):
            webhook(args, connect=fakes)


@pytest.fixture
def process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Certs, int]]:
    certs = Certs(tmp_path / "certs")
    command = [
        sys.executable,
        "-c",
        SERVE_WITH_FAKES,
        "webhook",
        "--cert-dir",
        str(certs.cert_dir),
        "--port",
        "0",
    ]
    proc = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        started = json.loads(proc.stderr.readline())
        assert started["event"] == "serving", started
        yield proc, certs, int(started["port"])
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def test_the_process_serves_and_stops_gracefully_on_sigterm(
    process: tuple[subprocess.Popen[str], Certs, int],
) -> None:
    proc, certs, port = process
    client = Client(certs, port)
    status, answer = client.post(*VALIDATE_OK)
    assert status == 200 and answer["response"]["allowed"] is True
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    assert proc.stderr is not None
    events = [json.loads(line)["event"] for line in proc.stderr.read().splitlines()]
    assert events == ["admission", "stopping", "stopped"]
    client.connection.close()


def test_sigint_stops_it_too(process: tuple[subprocess.Popen[str], Certs, int]) -> None:
    proc, _, _ = process
    proc.send_signal(signal.SIGINT)
    assert proc.wait(10) == 0
