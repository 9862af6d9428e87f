"""``katib-resume manifests`` as a user runs it: a process, real files, one-line errors."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest
import trustme
import yaml

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "katib_resume", "manifests", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)


def test_a_ca_bundle_from_a_pem_file_reaches_every_webhook(tmp_path: Path) -> None:
    ca = trustme.CA()
    pem = tmp_path / "ca.crt"
    ca.cert_pem.write_to_path(str(pem))
    done = run("--namespace", "katib-resume", "--image", "kr:dev", "--ca-bundle", pem)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    docs = list(yaml.safe_load_all(done.stdout))
    hooks = [h for d in docs if d["kind"].endswith("WebhookConfiguration") for h in d["webhooks"]]
    assert len(hooks) == 3, "the two Experiment webhooks and Katib's pod webhook"
    for hook in hooks:
        assert base64.b64decode(hook["clientConfig"]["caBundle"]) == ca.cert_pem.bytes()


def test_without_a_trust_setting_the_stream_comes_with_a_warning() -> None:
    done = run()
    assert done.returncode == 0
    assert (
        done.stderr.count("\n") == 1
        and "warning: neither --ca-bundle nor --cert-manager" in done.stderr
    )
    assert all(doc["metadata"]["name"] for doc in yaml.safe_load_all(done.stdout))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-n", "Team_A"], "'Team_A' is not a valid namespace name"),
        (["-n", "a" * 64], "is not a valid namespace name"),
        (["--image", "a b"], "'a b' is not an image reference"),
        (["--ca-bundle", "x.pem", "--cert-manager"], "not allowed with argument"),
        (
            ["--local-volume-path-prefix", "/srv"],
            "--local-volume-path-prefix needs --local-volumes",
        ),
        (["--local-volumes", "--local-volume-path-prefix", "srv"], "expected an absolute path"),
        (["--ca-bundle", "missing.pem"], "missing.pem: cannot read: No such file or directory"),
        (["--ca-bundle", "pyproject.toml"], "pyproject.toml: no PEM certificate"),
        (["--config", "pyproject.toml"], "pyproject.toml: invalid YAML"),
        (["--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["--db-manager-address", "katib-db-manager"], "expected HOST:PORT"),
        (["--db-manager-address", "db:99999"], "expected HOST:PORT"),
    ],
)
def test_bad_flags_get_one_line_and_status_2(args: list[str], message: str) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr


def test_a_broken_pem_block_is_named(tmp_path: Path) -> None:
    pem = tmp_path / "broken.pem"
    pem.write_text("-----BEGIN CERTIFICATE-----\n@@@@\n-----END CERTIFICATE-----\n")
    done = run("--ca-bundle", pem)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("broken.pem: certificate 1 is not valid PEM")


def test_the_db_manager_address_reaches_the_controller_and_the_webhook() -> None:
    done = run("--db-manager-address", "katib-db-manager.katib:6789", "--cert-manager")
    assert done.returncode == 0, done.stderr
    deployments = [d for d in yaml.safe_load_all(done.stdout) if d["kind"] == "Deployment"]
    for deployment in deployments:
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        args = container["args"]
        assert args[args.index("--db-manager-address") + 1] == "katib-db-manager.katib:6789"
    assert len(deployments) == 2
