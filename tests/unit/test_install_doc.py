"""``docs/install.md`` stays true to the command: its invocations parse, its names are generated."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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


def _shell_lines() -> list[str]:
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", DOC, flags=re.DOTALL):
        lines += block.replace("\\\n", " ").splitlines()
    return lines


def _walkthrough_docs() -> list[dict[str, Any]]:
    [argv] = [a for a in invocations() if "--namespace" in a][:1]
    args = build_parser().parse_args(argv)
    options = Options(katib_config="{}", image="i:1", namespace=args.namespace)
    return list(yaml.safe_load_all(render(generate(options))))


def test_the_walkthrough_fakes_no_trial() -> None:
    """Real trials: nothing writes a Trial's status by hand."""
    for line in _shell_lines():
        assert "--subresource=status" not in line, line
        assert not re.search(r"kubectl patch\s+\S*trial", line), line


def test_katibs_components_are_the_two_pinned_directories() -> None:
    contract = (ROOT / "docs" / "katib-contract.md").read_text()
    [pin] = set(re.findall(r"`([0-9a-f]{40})`", contract))
    assert f"REF={pin}" in _shell_lines()
    assert "KATIB=github.com/kubeflow/katib.git/manifests/v1beta1/components" in _shell_lines()
    applied = re.findall(r'kubectl apply -k "\$KATIB/([a-z-]+)\?ref=\$REF"', DOC)
    assert applied == ["mysql", "db-manager"]
    deleted = re.findall(r'kubectl delete -k "\$KATIB/([a-z-]+)\?ref=\$REF"', DOC)
    assert sorted(deleted) == sorted(applied)
    for directory in applied:
        assert f"`manifests/v1beta1/components/{directory}/`" in DOC


def test_the_db_manager_the_binaries_call_is_the_one_katibs_component_serves() -> None:
    from katib_resume.core.addresses import DB_MANAGER_ADDRESS

    host, port = DB_MANAGER_ADDRESS.split(":")
    service, namespace = host.split(".")
    assert f"Deployment and Service `{service}` (gRPC port {port})" in DOC
    assert f"kubectl rollout status deployment/{service} -n {namespace}" in DOC
    assert f"`{DB_MANAGER_ADDRESS}`" in DOC
    for doc in _walkthrough_docs():
        if doc["kind"] == "Deployment":
            [container] = doc["spec"]["template"]["spec"]["containers"]
            args = container["args"]
            assert args[args.index("--db-manager-address") + 1] == DB_MANAGER_ADDRESS


def test_the_namespace_label_is_the_pod_webhooks_selector() -> None:
    [hook] = [
        d["webhooks"][0]
        for d in _walkthrough_docs()
        if d["metadata"]["name"] == "katib.kubeflow.org"
    ]
    [(key, value)] = hook["namespaceSelector"]["matchLabels"].items()
    assert f"kubectl label namespace kubeflow {key}={value}" in _shell_lines()


def test_rollouts_name_generated_deployments_and_uninstall_deletes_every_webhook_config() -> None:
    docs = _walkthrough_docs()
    ours = {
        (d["metadata"]["name"], d["metadata"]["namespace"])
        for d in docs
        if d["kind"] == "Deployment"
    }
    rollouts = re.findall(r"kubectl rollout status deployment/(\S+) -n (\S+)", DOC)
    assert ours <= set(rollouts)
    uninstall = DOC.split("## Uninstall", 1)[1].split("## Flags", 1)[0]
    for doc in docs:
        if str(doc["kind"]).endswith("WebhookConfiguration"):
            kind, name = str(doc["kind"]).lower(), doc["metadata"]["name"]
            assert re.search(rf"kubectl delete \S*{kind}\S* {re.escape(name)}\n", uninstall), name


def test_the_containers_the_walkthrough_shows_are_the_injected_ones() -> None:
    from katib_resume.app.webhook.collector import FILE_SIDECAR

    example = yaml.safe_load((ROOT / "examples" / "from-volume-resume.yaml").read_text())
    primary = example["spec"]["trialTemplate"]["primaryContainerName"]
    assert f"`{primary} {FILE_SIDECAR}`" in DOC
    assert f"-c {FILE_SIDECAR}" in DOC
