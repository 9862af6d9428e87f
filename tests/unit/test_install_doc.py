"""``docs/install.md`` stays true to the command: its invocations parse, its names are generated."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from katib_resume.app.cli.main import build_parser
from katib_resume.app.manifests import Options, generate, render

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "install.md").read_text()


def invocations() -> list[list[str]]:
    """Every ``katib-resume manifests ...`` command line of the doc's shell blocks."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", DOC, flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("|")[0].split()
            if command[:2] == ["katib-resume", "manifests"]:
                found.append(command[1:])
    return found


def test_the_doc_shows_the_install_command() -> None:
    assert invocations()


@pytest.mark.parametrize("argv", invocations())
def test_each_invocation_parses(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert args.command == "manifests"


def test_every_flag_of_the_command_is_in_the_flags_table() -> None:
    table = DOC.split("## Flags", 1)[1]
    for flag in ("--namespace", "--image", "--config", "--local-volumes", "--ca-bundle"):
        assert f"`{flag}`" in table
    assert "`--local-volume-path-prefix`" in table and "`--cert-manager`" in table


def test_the_names_the_doc_uses_are_the_generated_ones() -> None:
    options = Options(
        katib_config="{}",
        image="i:1",
        namespace="katib-resume",
        local_volumes=True,
        cert_manager=True,
    )
    docs = list(yaml.safe_load_all(render(generate(options))))
    names = {doc["metadata"]["name"] for doc in docs}
    for name in re.findall(r"katib-resume-[a-z-]+[a-z]", DOC):
        if name not in ("katib-resume-webhook-ca", "katib-resume-webhook-cert"):
            assert name in names, name
    deployment = next(
        d
        for d in docs
        if d["metadata"]["name"] == "katib-resume-webhook" and d["kind"] == "Deployment"
    )
    [secret] = [v for v in deployment["spec"]["template"]["spec"]["volumes"] if "secret" in v]
    assert f"kubectl create secret tls {secret['secret']['secretName']}" in DOC
