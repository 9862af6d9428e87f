"""``adapters.k8s.config_map.ConfigMapSource``: a missing ConfigMap or key says Katib's texts.

A user of Katib who deletes or breaks the katib-config ConfigMap sees the API server's NotFound
(``configmaps "katib-config" not found``) or ``failed to find katib-config.yaml in ConfigMap:
katib-config``, and scripts match those texts; ours are the same, word for word. The namespace
we looked in, which those texts do not name, is said once in a log line, not in the message.
The source is fed through its store, as its watch would, so no server is needed.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from katib_resume.adapters.k8s.config_map import ConfigMapSource
from katib_resume.adapters.k8s.connect import to_url
from katib_resume.app.webhook import VALIDATE, Admission, Incoming, JsonLog, handle
from katib_resume.core.config import ConfigError, missing_config_key, missing_config_map
from katib_resume.core.manifest import Manifest
from tests.support import harness
from tests.support.kube_mock import config_map
from tests.support.pods import DB, answer, created_job, job_pod, trial_world
from tests.support.webhook import example, review, world

CONTRACT = Path(__file__).resolve().parents[2] / "docs" / "katib-contract.md"
UNREACHABLE = "http://127.0.0.1:9"
"""The watch is never started: nothing is sent there."""


def source(name: str = "katib-config") -> ConfigMapSource:
    return ConfigMapSource(to_url(UNREACHABLE), "kubeflow", name)


def shipped_text() -> str:
    return (harness.DATA / "katib-config.yaml").read_text(encoding="utf-8")


def stored(name: str = "katib-config", data: dict[str, str] | None = None) -> Manifest:
    made: Manifest = config_map("kubeflow", shipped_text(), name)
    made["metadata"] |= {"uid": f"uid-{name}", "resourceVersion": "1"}
    if data is not None:
        made["data"] = data
    return made


def failure(config: ConfigMapSource) -> str:
    with pytest.raises(ConfigError) as raised:
        config.katib_config()
    return str(raised.value)


def test_a_missing_config_map_is_the_api_servers_not_found() -> None:
    assert failure(source()) == 'configmaps "katib-config" not found'


def test_a_config_map_of_another_name_is_named_as_the_api_server_names_it() -> None:
    assert failure(source("my-config")) == 'configmaps "my-config" not found'


@pytest.mark.parametrize("data", [{}, {"config.yaml": "runtime: {}"}])
def test_a_missing_key_is_katibs_text(data: dict[str, str]) -> None:
    config = source()
    config.store.observe("ADDED", stored(data=data))
    assert failure(config) == "failed to find katib-config.yaml in ConfigMap: katib-config"


def test_a_config_map_without_data_misses_the_key_too() -> None:
    config = source()
    made = stored()
    del made["data"]
    config.store.observe("ADDED", made)
    assert failure(config) == "failed to find katib-config.yaml in ConfigMap: katib-config"


def test_the_config_map_with_its_key_is_read() -> None:
    config = source()
    config.store.observe("ADDED", stored())
    assert config.katib_config().suggestion("random").image


def test_where_we_looked_is_logged_once_per_new_failure(caplog: pytest.LogCaptureFixture) -> None:
    config = source()
    with caplog.at_level(logging.WARNING, logger="katib_resume.config"):
        failure(config)
        failure(config)  # the same failure: every reconcile meets it, the log says it once
        config.store.observe("ADDED", stored(data={}))
        failure(config)
    where = [(r.__dict__["configMap"], r.__dict__["error"]) for r in caplog.records]
    assert where == [
        ("ConfigMap kubeflow/katib-config", 'configmaps "katib-config" not found'),
        (
            "ConfigMap kubeflow/katib-config",
            "failed to find katib-config.yaml in ConfigMap: katib-config",
        ),
    ]


def test_a_failure_is_logged_again_after_the_config_was_good(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = source()
    with caplog.at_level(logging.WARNING, logger="katib_resume.config"):
        failure(config)
        config.store.observe("ADDED", stored())
        config.katib_config()
        config.store.observe("DELETED", stored())
        failure(config)
    assert [r.__dict__["error"] for r in caplog.records] == [
        'configmaps "katib-config" not found',
        'configmaps "katib-config" not found',
    ]


def test_admission_says_katibs_text_after_its_own_reason() -> None:
    """Admission answers an unreadable katib-config with a server-side denial (500, docs/
    webhook.md); the reason it gives ends with Katib's text, unaltered."""
    body = json.dumps(review(example())).encode()
    reply = handle(
        Admission(world(), source()),
        JsonLog(),
        Incoming("POST", VALIDATE, "application/json", body),
    )
    assert reply.body["response"]["status"] == {
        "code": 500,
        "message": 'katib-config is unusable: configmaps "katib-config" not found',
    }


def test_the_pod_webhook_says_katibs_text_after_its_own_reason() -> None:
    cluster, trial = trial_world()
    config = source()
    config.store.observe("ADDED", stored(data={}))
    response = answer(Admission(cluster, config, DB), job_pod(created_job(cluster, trial)))
    assert response["status"] == {
        "code": 500,
        "message": "katib-config is unusable: failed to find katib-config.yaml in ConfigMap: "
        "katib-config",
    }


def contract_error(problem: str) -> str:
    """The quoted text of ``problem``'s row in docs/katib-contract.md#katib-config's errors."""
    text = CONTRACT.read_text(encoding="utf-8")
    found = re.search(rf"^\| {re.escape(problem)} \| [^`|]*`([^`]+)` \|$", text, re.MULTILINE)
    assert found, problem
    return found.group(1)


def test_the_texts_are_the_ones_the_contract_quotes() -> None:
    assert str(missing_config_map()) == contract_error("no ConfigMap")
    assert str(missing_config_key()) == contract_error("no key")
