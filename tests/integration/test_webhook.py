"""The admission webhook over real TLS: Katib's admission scenarios
(docs/katib-contract.md#admission) and defaults.

Every request goes through the real server on a free port with a trustme certificate, over one
keep-alive HTTPS connection as the API server keeps it, against a fake cluster and Katib's
shipped katib-config. Messages are compared in full: they are Katib's, and users script on them.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.webhook import MUTATE, VALIDATE, Admission
from katib_resume.core.actions import ObjectRef
from katib_resume.core.config import ConfigError, KatibConfig
from katib_resume.core.defaults import default_experiment
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment
from katib_resume.core.ports import Unavailable
from tests.support.delegating import DelegatingCluster
from tests.support.webhook import (
    NAMESPACE,
    TlsWebhook,
    apply_patch,
    completed,
    example,
    namespace,
    patch_of,
    review,
    shipped_config,
    world,
)

UID = "0df28fbd-5f5f-4f44-8d0b-1a1c3f1e2a10"
STALE_PV = "from-volume-resume-random-kubeflow"


@pytest.fixture
def cluster() -> FakeCluster:
    return world()


@pytest.fixture
def webhook(tmp_path: Path, cluster: FakeCluster) -> Iterator[TlsWebhook]:
    with TlsWebhook(tmp_path / "certs", Admission(cluster, shipped_config())) as server:
        yield server


def answer(webhook: TlsWebhook, path: str, body: Any) -> Manifest:
    code, reply = webhook.post(path, body)
    assert code == 200, reply
    response: Manifest = reply["response"]
    assert reply["apiVersion"] == "admission.k8s.io/v1" and reply["kind"] == "AdmissionReview"
    assert response["uid"] == UID
    return response


def validate(webhook: TlsWebhook, new: Manifest | None, old: Manifest | None = None) -> Manifest:
    operation = "CREATE" if old is None else "UPDATE"
    return answer(webhook, VALIDATE, review(new, old, operation=operation, uid=UID))


def denial(response: Manifest) -> str:
    assert response["allowed"] is False
    message: str = response["status"]["message"]
    return message


def edited(exp: Manifest, **spec: Any) -> Manifest:
    changed = copy.deepcopy(exp)
    changed["spec"].update(spec)
    return changed


def defaulted(exp: Manifest) -> Manifest:
    """What the cluster stores: the mutating webhook ran first."""
    return default_experiment(Experiment.model_validate(exp)).to_dict()


# --- CREATE: Katib's rules and texts -------------------------------------------------------------


def test_the_from_volume_example_is_admitted(webhook: TlsWebhook) -> None:
    assert validate(webhook, defaulted(example())) == {"uid": UID, "allowed": True}


def test_a_namespace_without_the_injection_label_is_refused(
    webhook: TlsWebhook, cluster: FakeCluster
) -> None:
    cluster.create(namespace("team-a", {"team": "a"}))
    exp = edited(example(), parallelTrialCount=3)
    exp["metadata"]["namespace"] = "team-a"
    expected = (
        'Cannot create the Experiment "from-volume-resume" in namespace "team-a": the namespace '
        'lacks label "katib.kubeflow.org/metrics-collector-injection: enabled"'
    )
    assert denial(validate(webhook, exp)) == expected
    exp["metadata"]["namespace"] = "nowhere"  # no such Namespace: no labels either
    assert 'in namespace "nowhere": the namespace lacks label' in denial(validate(webhook, exp))


COUNT_CASES = [
    (
        {"maxFailedTrialCount": -1},
        "spec.maxFailedTrialCount: Invalid value: -1: should not be less than 0",
    ),
    (
        {"maxTrialCount": 0, "parallelTrialCount": None, "maxFailedTrialCount": None},
        "[spec.maxTrialCount: Invalid value: 0: must be greater than 0, "  # parallel defaulted to 3
        "spec.parallelTrialCount: Invalid value: 3: should be less than or equal to "
        "spec.maxTrialCount]",
    ),
    (
        {"parallelTrialCount": -1},
        "spec.parallelTrialCount: Invalid value: -1: must be greater than 0",
    ),
    (
        {"maxFailedTrialCount": 13},
        "spec.maxFailedTrialCount: Invalid value: 13: should be less than or equal to "
        "spec.maxTrialCount",
    ),
    (
        {"parallelTrialCount": 13},
        "spec.parallelTrialCount: Invalid value: 13: should be less than or equal to "
        "spec.maxTrialCount",
    ),
    (
        {"resumePolicy": "Sometimes"},
        'spec.resumePolicy: Invalid value: "Sometimes": invalid ResumePolicyType',
    ),
    (
        {"algorithm": {"algorithmName": "annealing"}},
        'spec.algorithm.algorithmName: Invalid value: "annealing": failed to find suggestion '
        "config for algorithm: annealing in ConfigMap: katib-config",
    ),
]


@pytest.mark.parametrize(("spec", "message"), COUNT_CASES)
def test_katib_field_rules_with_their_texts(
    webhook: TlsWebhook, spec: dict[str, Any], message: str
) -> None:
    assert denial(validate(webhook, edited(example(), **spec))) == message


def test_several_errors_are_aggregated_as_kubernetes_does(webhook: TlsWebhook) -> None:
    exp = edited(example(), maxTrialCount=-2, parallelTrialCount=0)
    assert denial(validate(webhook, exp)) == (
        "[spec.maxTrialCount: Invalid value: -2: must be greater than 0, "
        "spec.parallelTrialCount: Invalid value: 0: must be greater than 0, "
        "spec.maxFailedTrialCount: Invalid value: 3: should be less than or equal to "
        "spec.maxTrialCount, spec.parallelTrialCount: Invalid value: 0: should be less than or "
        "equal to spec.maxTrialCount]"
    )


def test_katib_name_rule_keeps_its_trailing_space(webhook: TlsWebhook) -> None:
    exp = example()
    exp["metadata"]["name"] = "x" * 41
    assert denial(validate(webhook, exp)) == (
        f'metadata.name: Invalid value: "{"x" * 41}": name must consist of lower case '
        "alphanumeric characters or '-', start with an alphabetic character, and end with an "
        "alphanumeric character (e.g. 'my-name', or 'abc-123', regex used for validation is "
        "'^[a-z]([-a-z0-9]*[a-z0-9])?)') and may not be longer than 40 characters. "
    )  # alone: no word of the derived names it would also break


# --- the stale-PV check, read live ----------------------------------------------------------------


def pv(name: str) -> Manifest:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": {}}


def test_a_pv_left_by_a_deleted_experiment_refuses_the_create(
    webhook: TlsWebhook, cluster: FakeCluster
) -> None:
    exp = defaulted(example())
    assert validate(webhook, exp)["allowed"] is True
    cluster.create(pv(STALE_PV))  # appears while the server runs: read live, not cached
    assert denial(validate(webhook, exp)) == (
        f"Cannot create the Experiment: from-volume-resume in namespace: kubeflow, PV: {STALE_PV} "
        "is not deleted"
    )


def test_the_pv_check_is_for_creates_of_from_volume_only(
    webhook: TlsWebhook, cluster: FakeCluster
) -> None:
    cluster.create(pv(STALE_PV))
    long_running = edited(defaulted(example()), resumePolicy="LongRunning")
    assert validate(webhook, long_running)["allowed"] is True
    stored = completed(defaulted(example()))
    assert validate(webhook, edited(stored, maxTrialCount=20), stored)["allowed"] is True


def test_field_errors_come_before_the_pv_check(webhook: TlsWebhook, cluster: FakeCluster) -> None:
    cluster.create(pv(STALE_PV))
    message = denial(validate(webhook, edited(defaulted(example()), parallelTrialCount=0)))
    assert message == "spec.parallelTrialCount: Invalid value: 0: must be greater than 0"


class FailingReads(DelegatingCluster):
    """A cluster whose reads of one kind fail as an unreachable API server's do."""

    def __init__(self, inner: FakeCluster, kind: str) -> None:
        super().__init__(inner)
        self.kind = kind

    def get(self, ref: ObjectRef) -> Manifest:
        if ref.kind == self.kind:
            raise Unavailable("the server is currently unable to handle the request")
        return self.inner.get(ref)


def test_an_unreadable_pv_denies_with_katibs_error_text(tmp_path: Path) -> None:
    failing = FailingReads(world(), "PersistentVolume")
    with TlsWebhook(tmp_path, Admission(failing, shipped_config())) as webhook:
        assert denial(validate(webhook, defaulted(example()))) == (
            "Cannot create the Experiment: from-volume-resume in namespace: kubeflow, error: "
            "the server is currently unable to handle the request"
        )


class BrokenConfig:
    def katib_config(self) -> KatibConfig:
        raise ConfigError("failed to parse katib-config.yaml: runtime: expected a mapping")


def test_an_unreadable_namespace_or_config_is_a_server_side_denial(tmp_path: Path) -> None:
    failing = FailingReads(world(), "Namespace")
    with TlsWebhook(tmp_path / "a", Admission(failing, shipped_config())) as webhook:
        response = validate(webhook, defaulted(example()))
        assert response["status"] == {
            "code": 500,
            "message": 'cannot read Namespace "kubeflow": the server is currently unable to '
            "handle the request",
        }
    with TlsWebhook(tmp_path / "b", Admission(world(), BrokenConfig())) as webhook:
        response = validate(webhook, defaulted(example()))
        assert response["status"] == {
            "code": 500,
            "message": "katib-config is unusable: failed to parse katib-config.yaml: runtime: "
            "expected a mapping",
        }


def test_deleting_never_depends_on_the_namespace_or_katib_config(tmp_path: Path) -> None:
    """Finalizer removal (a metadata-only UPDATE) is admitted even when nothing can be read."""
    stored = completed(defaulted(example()))
    stored["metadata"]["finalizers"] = ["update-prometheus-metrics"]
    released = copy.deepcopy(stored)
    released["metadata"]["finalizers"] = []
    broken = Admission(FailingReads(world(), "Namespace"), BrokenConfig())
    with TlsWebhook(tmp_path, broken) as webhook:
        assert validate(webhook, released, stored)["allowed"] is True


# --- UPDATE: restarts (docs/katib-contract.md#restart-rules) --------------------------------------

RESTART_DETAIL = (
    "Experiment can be restarted if it is in succeeded state by reaching max trials and "
    "spec.resumePolicy = LongRunning or spec.resumePolicy = FromVolume, when experiment is "
    "completed"
)


def test_raising_the_budget_of_a_completed_from_volume_experiment_is_a_restart(
    webhook: TlsWebhook,
) -> None:
    stored = completed(defaulted(example()))
    assert validate(webhook, edited(stored, maxTrialCount=20), stored)["allowed"] is True


def test_a_never_experiment_cannot_be_restarted(webhook: TlsWebhook) -> None:
    stored = completed(edited(defaulted(example()), resumePolicy="Never"))
    message = denial(validate(webhook, edited(stored, maxTrialCount=20), stored))
    assert message == f'spec.resumePolicy: Invalid value: "Never": {RESTART_DETAIL}'


def test_an_experiment_that_reached_its_goal_cannot_be_restarted(webhook: TlsWebhook) -> None:
    stored = completed(defaulted(example()), reason="ExperimentGoalReached")
    message = denial(validate(webhook, edited(stored, maxTrialCount=20), stored))
    assert message == f'spec.resumePolicy: Invalid value: "FromVolume": {RESTART_DETAIL}'


def test_the_new_budget_must_exceed_the_trials_run(webhook: TlsWebhook) -> None:
    stored = completed(defaulted(example()))
    message = denial(
        validate(webhook, edited(stored, maxTrialCount=12, parallelTrialCount=2), stored)
    )
    assert (
        message == "spec.maxTrialCount: Invalid value: 12: must be greater than status.trials count"
    )


def test_only_the_three_counts_are_editable(webhook: TlsWebhook) -> None:
    stored = completed(defaulted(example()))
    changed = edited(stored, maxTrialCount=20, algorithm={"algorithmName": "tpe"})
    assert denial(validate(webhook, changed, stored)) == (
        "spec: Forbidden: only spec.parallelTrialCount, spec.maxTrialCount and "
        "spec.maxFailedTrialCount are editable"
    )


# --- defaults via /mutate-experiment -------------------------------------------------------------


def mutate(webhook: TlsWebhook, exp: Manifest, operation: str = "CREATE") -> Manifest:
    old = exp if operation == "UPDATE" else None
    return answer(webhook, MUTATE, review(exp, old, operation=operation, uid=UID))


def test_mutate_answers_katibs_defaults_as_a_json_patch(webhook: TlsWebhook) -> None:
    bare = example()
    for field in ("parallelTrialCount", "resumePolicy"):
        del bare["spec"][field]
    response = mutate(webhook, bare)
    assert response["allowed"] is True
    patch = patch_of({"response": response})
    assert {"op": "add", "path": "/spec/parallelTrialCount", "value": 3} in patch
    assert {"op": "add", "path": "/spec/resumePolicy", "value": "Never"} in patch
    assert {
        "op": "add",
        "path": "/spec/metricsCollectorSpec",
        "value": {"collector": {"kind": "StdOut"}},
    } in patch
    assert apply_patch(bare, patch) == defaulted(bare)


def test_mutate_names_only_what_changes(webhook: TlsWebhook) -> None:
    exp = example()
    paths = sorted(op["path"] for op in patch_of({"response": mutate(webhook, exp)}))
    assert paths == [
        "/spec/metricsCollectorSpec",
        "/spec/objective/metricStrategies",
        "/spec/parameters/0/feasibleSpace/distribution",
        "/spec/parameters/1/feasibleSpace/distribution",
        "/spec/trialTemplate/failureCondition",
        "/spec/trialTemplate/successCondition",
    ]


def test_a_defaulted_experiment_gets_no_patch(webhook: TlsWebhook) -> None:
    assert mutate(webhook, defaulted(example())) == {"uid": UID, "allowed": True}
    assert mutate(webhook, defaulted(example()), "UPDATE") == {"uid": UID, "allowed": True}


def test_a_null_count_is_replaced_and_unknown_fields_pass_untouched(webhook: TlsWebhook) -> None:
    exp = defaulted(example())
    exp["spec"]["parallelTrialCount"] = None
    exp["spec"]["fromANewerKatib"] = {"keep": ["me"]}
    patch = patch_of({"response": mutate(webhook, exp)})
    assert patch == [{"op": "replace", "path": "/spec/parallelTrialCount", "value": 3}]


def test_delete_is_allowed_untouched(webhook: TlsWebhook) -> None:
    for path in (VALIDATE, MUTATE):
        body = review(None, defaulted(example()), operation="DELETE", uid=UID)
        assert answer(webhook, path, body) == {"uid": UID, "allowed": True}


# --- malformed requests over the wire (the fuzz sends thousands more) ----------------------------


def test_a_malformed_review_with_a_uid_is_denied_by_uid(webhook: TlsWebhook) -> None:
    wrong_kind = review(example(), uid=UID)
    wrong_kind["request"]["kind"] = {"group": "", "version": "v1", "kind": "Pod"}
    message = denial(answer(webhook, VALIDATE, wrong_kind))
    assert (
        message
        == 'request.kind: this webhook admits Experiment (kubeflow.org) only, found "Pod" ("")'
    )
    no_object = review(None, uid=UID)
    assert (
        denial(answer(webhook, MUTATE, no_object))
        == "request.object: expected an object, found nothing"
    )
    not_an_experiment = review(
        {"metadata": {"name": "x"}, "spec": {"maxTrialCount": "many"}}, uid=UID
    )
    assert denial(answer(webhook, VALIDATE, not_an_experiment)).startswith(
        "request.object: not an Experiment: spec.algorithm: Field required"
    )


def test_wrong_content_type_is_denied_by_uid_or_refused(webhook: TlsWebhook) -> None:
    code, reply = webhook.post(VALIDATE, review(example(), uid=UID), content_type="text/plain")
    assert code == 200 and reply["response"]["uid"] == UID
    assert reply["response"]["status"]["message"] == (
        "Content-Type must be application/json, found 'text/plain'"
    )
    code, reply = webhook.post(VALIDATE, b"not json", content_type="text/plain")
    assert (code, reply["message"]) == (
        415,
        "Content-Type must be application/json, found 'text/plain'",
    )


def test_without_a_uid_the_answer_is_an_http_error(webhook: TlsWebhook) -> None:
    body = review(example())
    del body["request"]["uid"]
    assert webhook.post(VALIDATE, body) == (
        400,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "code": 400,
            "message": "request.uid: expected a non-empty string",
        },
    )
    code, reply = webhook.post(VALIDATE, b"[1, 2")
    assert code == 400 and reply["message"].startswith("request body is not valid JSON")


def test_paths_methods_and_health(webhook: TlsWebhook) -> None:
    connection = webhook.connection
    connection.request("GET", "/healthz")
    assert webhook.read(connection) == (200, {"status": "ok"})
    connection.request("GET", VALIDATE)
    code, reply = webhook.read(connection)
    assert (code, reply["message"]) == (
        405,
        "method GET is not allowed on /validate-experiment: use POST",
    )
    code, reply = webhook.post("/validate-pod", b"{}")
    assert code == 404 and reply["message"].startswith("nothing at '/validate-pod'")
    query = f"{VALIDATE}?timeout=10s"  # as the API server calls it
    assert webhook.post(query, review(defaulted(example()), uid=UID))[1]["response"]["allowed"]


def test_a_body_over_the_limit_is_refused_unread(webhook: TlsWebhook) -> None:
    connection = webhook.connect()
    connection.putrequest("POST", VALIDATE)
    connection.putheader("Content-Type", "application/json")
    connection.putheader("Content-Length", str(100 * 1024 * 1024))
    connection.endheaders()
    code, reply = webhook.read(connection)
    assert code == 413
    assert (
        reply["message"]
        == f"body of {100 * 1024 * 1024} bytes is over the limit of {7 * 1024 * 1024}"
    )


def test_chunked_and_missing_lengths_are_refused(webhook: TlsWebhook) -> None:
    connection = webhook.connect()
    connection.request("POST", VALIDATE, iter([b"{}"]), {"Content-Type": "application/json"})
    code, reply = webhook.read(connection)
    assert (code, reply["message"]) == (
        411,
        "a Content-Length is required (chunked bodies are not accepted)",
    )


def raw_tls(webhook: TlsWebhook) -> Any:
    import socket

    plain = socket.create_connection(("127.0.0.1", webhook.port), timeout=10)
    return webhook.certs.client_context().wrap_socket(plain, server_hostname="localhost")


def test_a_stalled_body_is_cut_off_and_others_are_still_served(tmp_path: Path) -> None:
    from katib_resume.app.webhook import Limits

    limits = Limits(request_seconds=1.0, io_seconds=0.5, grace_seconds=0.5)
    with TlsWebhook(tmp_path, limits=limits) as webhook:
        slow = raw_tls(webhook)
        slow.sendall(
            f"POST {VALIDATE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            'Content-Length: 1000\r\n\r\n{"apiVersion"'.encode()
        )
        started = time.monotonic()
        assert webhook.post(VALIDATE, review(defaulted(example()), uid=UID))[0] == 200
        answer_to_slow = slow.recv(65536)  # 408 after the read timeout, then the connection ends
        assert b"408" in answer_to_slow.split(b"\r\n")[0]
        assert time.monotonic() - started < 3


def test_a_slowloris_client_is_cut_at_the_deadline(tmp_path: Path) -> None:
    from katib_resume.app.webhook import Limits

    limits = Limits(request_seconds=1.0, io_seconds=0.5, grace_seconds=0.5)
    with TlsWebhook(tmp_path, limits=limits) as webhook:
        drip = raw_tls(webhook)
        started = time.monotonic()
        closed = False
        with pytest.raises(OSError):  # the write that fails once the server cut the connection
            for byte in f"POST {VALIDATE} HTTP/1.1\r\nHost: x\r\n".encode():
                drip.sendall(bytes([byte]))
                time.sleep(0.2)  # under the read timeout, so only the deadline stops it
                if time.monotonic() - started > 5:
                    break
            closed = True
        assert not closed
        assert time.monotonic() - started < 3
        assert webhook.post(VALIDATE, review(defaulted(example()), uid=UID))[0] == 200


def test_a_client_that_never_handshakes_holds_nobody_up(tmp_path: Path) -> None:
    import socket

    from katib_resume.app.webhook import Limits

    limits = Limits(request_seconds=1.0, io_seconds=0.5, grace_seconds=0.5)
    with TlsWebhook(tmp_path, limits=limits) as webhook:
        silent = [socket.create_connection(("127.0.0.1", webhook.port)) for _ in range(5)]
        assert webhook.post(VALIDATE, review(defaulted(example()), uid=UID))[0] == 200
        for conn in silent:
            conn.settimeout(3)
            assert conn.recv(10) == b""  # closed by the server at the deadline
            conn.close()
        events = [e["event"] for e in webhook.log_events()]
        assert "connection-failed" in events


def test_connections_over_the_limit_are_closed_at_accept(tmp_path: Path) -> None:
    import socket

    from katib_resume.app.webhook import Limits

    limits = Limits(max_connections=2, request_seconds=2.0, io_seconds=1.0, grace_seconds=0.5)
    with TlsWebhook(tmp_path, limits=limits) as webhook:
        webhook.connection.close()
        held = [raw_tls(webhook) for _ in range(2)]
        extra = socket.create_connection(("127.0.0.1", webhook.port), timeout=3)
        assert extra.recv(10) == b""
        for conn in [*held, extra]:
            conn.close()
        assert "connection-refused" in [e["event"] for e in webhook.log_events()]


class SlowCluster(FailingReads):
    """Reads take a while: a request is still being decided when shutdown begins."""

    deciding = threading.Event()

    def get(self, ref: ObjectRef) -> Manifest:
        self.deciding.set()
        time.sleep(0.5)
        return self.inner.get(ref)


def test_shutdown_lets_the_request_in_flight_finish(tmp_path: Path) -> None:
    from katib_resume.app.webhook import Limits

    cluster = SlowCluster(world(), "")
    slow = Admission(cluster, shipped_config())
    webhook = TlsWebhook(tmp_path, slow, Limits(request_seconds=5.0, grace_seconds=3.0))
    result: list[tuple[int, Any]] = []
    client = threading.Thread(
        target=lambda: result.append(webhook.post(VALIDATE, review(defaulted(example()), uid=UID)))
    )
    client.start()
    assert cluster.deciding.wait(5)
    webhook.server.close()
    client.join(5)
    assert webhook.server.open_connections() == 0
    assert result and result[0][0] == 200 and result[0][1]["response"]["allowed"] is True
    webhook.connection.close()


def test_a_slow_decision_holds_up_no_other_connection(tmp_path: Path) -> None:
    """Decisions run in worker threads: one waiting on the cluster leaves the server serving."""
    cluster = SlowCluster(world(), "")
    cluster.deciding = threading.Event()
    with TlsWebhook(tmp_path, Admission(cluster, shipped_config())) as webhook:
        slow = threading.Thread(
            target=lambda: webhook.post(VALIDATE, review(defaulted(example()), uid=UID))
        )
        slow.start()
        assert cluster.deciding.wait(5)
        other = webhook.connect()
        started = time.monotonic()
        other.request("GET", "/healthz")
        assert webhook.read(other) == (200, {"status": "ok"})
        assert time.monotonic() - started < 0.4  # the slow read takes 0.5 s
        other.close()
        slow.join(5)


def test_every_admission_is_logged_as_one_json_line(webhook: TlsWebhook) -> None:
    validate(webhook, defaulted(example()))
    events = [e for e in webhook.log_events() if e["event"] == "admission"]
    assert len(events) == 1
    logged = events[0]
    assert logged["uid"] == UID and logged["allowed"] is True and logged["level"] == "info"
    assert (logged["namespace"], logged["name"], logged["operation"]) == (
        NAMESPACE,
        "from-volume-resume",
        "CREATE",
    )


def test_what_the_http_parser_refuses_is_answered_in_json_too(webhook: TlsWebhook) -> None:
    """aiohttp's own refusals (a bad Content-Length, a request line that is not HTTP)."""
    for request, message in [
        (
            f"POST {VALIDATE} HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n",
            "Invalid character in Content-Length: b'Content-Length: ten'",
        ),
        ("NOT HTTP\r\n\r\n", "Invalid method encountered: b'NOT HTTP'"),
    ]:
        conn = raw_tls(webhook)
        conn.sendall(request.encode())
        head, _, body = conn.recv(65536).partition(b"\r\n\r\n")
        assert head.split(b"\r\n")[0].endswith(b"400 Bad Request")
        assert b"Content-Type: application/json" in head
        assert json.loads(body) == {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "code": 400,
            "message": message,
        }
        conn.close()
    assert "http-error" in [e["event"] for e in webhook.log_events()]
