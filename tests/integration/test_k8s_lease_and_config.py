"""Leader election on a Lease and the katib-config ConfigMap, over HTTP against kmock."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

from katib_resume.adapters.k8s.config_map import ConfigMapSource
from katib_resume.adapters.k8s.connect import to_url
from katib_resume.adapters.k8s.lease import LeaseElector
from katib_resume.adapters.k8s.transport import MERGE_PATCH, Transport
from katib_resume.core.config import ConfigError
from tests.support.kube_mock import MockServer, config_map
from tests.support.waiting import eventually

DATA = Path(__file__).resolve().parents[2] / "app" / "data"


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def electors(url: str, namespace: str, ticks: Ticks) -> tuple[LeaseElector, LeaseElector]:
    def one(identity: str) -> LeaseElector:
        return LeaseElector(to_url(url), namespace, identity, duration=15, monotonic=ticks)

    return one("a"), one("b")


def test_one_leader_at_a_time_and_a_takeover_only_after_expiry(
    kube: MockServer, namespace: str
) -> None:
    ticks = Ticks()
    a, b = electors(kube.url, namespace, ticks)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    ticks.now += 10
    assert a.try_acquire_or_renew()  # a renews
    assert not b.try_acquire_or_renew()  # b saw the renewal: a fresh 15 s for a
    ticks.now += 14
    assert not b.try_acquire_or_renew()
    ticks.now += 2  # a went silent for longer than the lease, as b observed it
    assert b.try_acquire_or_renew()
    lease = kube.call(lambda m: m.stored("coordination.k8s.io/v1/leases", namespace, a.name))
    assert lease["spec"]["holderIdentity"] == "b"
    assert lease["spec"]["leaseTransitions"] == 1


def test_two_candidates_racing_for_an_expired_lease_cannot_both_win(
    kube: MockServer, namespace: str
) -> None:
    ticks = Ticks()
    a, b = electors(kube.url, namespace, ticks)
    c = LeaseElector(to_url(kube.url), namespace, "c", duration=15, monotonic=ticks)
    assert c.try_acquire_or_renew()
    assert not a.try_acquire_or_renew() and not b.try_acquire_or_renew()
    ticks.now += 20
    # both read the same expired version; the second write is refused by its precondition
    seen = a.transport.request("GET", a.path)
    assert a._write(seen, seen["spec"], mine=False)
    assert not b._write(seen, seen["spec"], mine=False)
    lease = kube.call(lambda m: m.stored("coordination.k8s.io/v1/leases", namespace, a.name))
    assert lease["spec"]["holderIdentity"] == "a"


def test_release_hands_over_at_once(kube: MockServer, namespace: str) -> None:
    ticks = Ticks()
    a, b = electors(kube.url, namespace, ticks)
    stop = threading.Event()
    thread = threading.Thread(target=a.run, args=(stop,), daemon=True)
    a.retry_period = 0.05
    thread.start()
    assert a.leading.wait(5)
    stop.set()
    thread.join(5)
    a.release()
    assert b.try_acquire_or_renew()


def test_a_leader_that_cannot_renew_stops_leading(kube: MockServer, namespace: str) -> None:
    ticks = Ticks()
    a, _ = electors(kube.url, namespace, ticks)
    a.retry_period = 0.02
    stop = threading.Event()
    thread = threading.Thread(target=a.run, args=(stop,), daemon=True)
    thread.start()
    assert a.leading.wait(5)
    kube.call(lambda m: m.fail("GET", f"/{namespace}/leases/", 500, times=10_000))
    ticks.now += 11  # past the renew deadline without a successful renewal
    assert a.lost.wait(5)
    assert not a.leading.is_set()
    stop.set()
    kube.call(lambda m: m.faults.clear())


def put_config(transport: Transport, namespace: str, text: str) -> None:
    body = config_map(namespace, text)
    transport.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body)


def test_the_config_map_is_read_and_re_read_when_it_changes(
    kube: MockServer, namespace: str
) -> None:
    transport = to_url(kube.url)
    source = ConfigMapSource(transport, namespace)
    assert source.start(5)
    with pytest.raises(ConfigError, match=r'^configmaps "katib-config" not found$'):
        source.katib_config()
    text = (DATA / "katib-config.yaml").read_text(encoding="utf-8")
    put_config(transport, namespace, text)
    eventually(lambda: source.store.get(("v1", "ConfigMap", namespace, "katib-config")) is not None)
    assert source.katib_config().suggestion("random").image
    changed = yaml.safe_load(text)
    changed["runtime"]["suggestions"] = [
        {"algorithmName": "random", "image": "example.org/random:v2"}
    ]
    path = f"/api/v1/namespaces/{namespace}/configmaps/katib-config"
    body = {"data": {"katib-config.yaml": yaml.safe_dump(changed)}}
    transport.request("PATCH", path, body=body, content_type=MERGE_PATCH)
    eventually(lambda: source.katib_config().suggestion("random").image == "example.org/random:v2")
    transport.request(
        "PATCH", path, body={"data": {"katib-config.yaml": "a: [b"}}, content_type=MERGE_PATCH
    )
    eventually(lambda: _fails(source))
    with pytest.raises(ConfigError, match="is not valid YAML"):
        source.katib_config()
    source.close()


def _fails(source: ConfigMapSource) -> bool:
    try:
        source.katib_config()
    except ConfigError:
        return True
    return False
