"""``adapters.k8s.store.Store``: a write's answer is its own echo, logged once.

If the watch lost the echo of the controller's own write, the cache would already hold the
answer and a relist would find nothing to repair, so whoever the echo should have woken up
(a Trial's reconcile after its status write) would wait for ever. The answer is logged when
it is remembered; the watch's echo of the same version is then not logged a second time.
"""

from __future__ import annotations

from katib_resume.adapters.k8s.store import Store
from katib_resume.core.manifest import Manifest


def job(version: str) -> Manifest:
    meta = {"name": "t1", "namespace": "ns", "uid": "u1", "resourceVersion": version}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta}


def logged(store: Store, since: int) -> list[tuple[str, str]]:
    _, changes = store.changes_since(since)
    return [(c.type, c.object["metadata"]["resourceVersion"]) for c in changes]


def test_a_remembered_write_wakes_its_owners_even_if_the_watch_never_echoes_it() -> None:
    store = Store()
    store.observe("ADDED", job("1"))
    start = store.cursor
    store.remember(job("2"))
    assert logged(store, start) == [("MODIFIED", "2")]


def test_the_watchs_echo_of_a_remembered_version_is_not_logged_again() -> None:
    store = Store()
    store.observe("ADDED", job("1"))
    start = store.cursor
    store.remember(job("2"))
    store.observe("MODIFIED", job("2"))  # the echo
    store.observe("MODIFIED", job("3"))  # somebody else's write
    assert logged(store, start) == [("MODIFIED", "2"), ("MODIFIED", "3")]


def test_an_answer_older_than_what_the_watch_gave_is_neither_kept_nor_logged() -> None:
    store = Store()
    store.observe("ADDED", job("5"))
    start = store.cursor
    store.remember(job("4"))
    assert logged(store, start) == []
    assert store.get(("batch/v1", "Job", "ns", "t1")) == job("5")
