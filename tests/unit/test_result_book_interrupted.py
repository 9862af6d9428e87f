"""A result book's call stopped part-way (a stop signal's ``KeyboardInterrupt`` lands between
any two bytecodes) leaves a page the closing runtime can keep: ``kept`` and ``since`` answer,
with no entry at a Trial's version but its own, and the next call gives the full book's
results. Stopped at every line the call runs (``tests/support/interrupts.py``)."""

from __future__ import annotations

from functools import partial

from katib_resume.adapters.fake import FakeClock, FakeCluster
from katib_resume.app.embedded.results import ResultBook
from katib_resume.app.loop.informer import Informer
from katib_resume.app.loop.keys import Key
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.objects import version_of
from tests.property.test_trial_book import NAME, NS, _apply, _experiment
from tests.support.interrupts import stopped_at

KEY = Key(NS, NAME)


def test_a_call_stopped_at_any_line_leaves_a_page_that_can_be_kept() -> None:
    line = 0
    while True:
        line += 1
        cluster = FakeCluster(FakeClock())
        informer, book = Informer(cluster.for_cache()), ResultBook()
        _apply(cluster, ("experiment", "", NS, ""))
        for name in ("t1", "t2", "t3"):
            _apply(cluster, ("create", name, NS, NAME))
        _apply(cluster, ("outcome", "t3", NS, "0.9"))
        informer.sync()
        experiment = _experiment(cluster)
        assert experiment is not None
        book.results(informer, experiment)
        before = book.kept(KEY)  # as a summary read when the command started holds it
        for name in ("t1", "t2"):
            _apply(cluster, ("outcome", name, NS, "0.5"))
        informer.sync()
        if not stopped_at(line, partial(book.results, informer, experiment)):
            break  # past the call's last line: every one was tried
        full = ResultBook()
        results = dict(full.results(informer, experiment))
        whole = full.kept(KEY)
        assert whole is not None
        listed = cluster.list(API_VERSION, "Trial", NS, {LABEL_EXPERIMENT: NAME})
        now = {t["metadata"]["name"]: version_of(t) for t in listed}
        kept = book.kept(KEY)
        for name, (version, entry) in (kept.entries if kept is not None else {}).items():
            if version == now[name]:  # an entry the next command takes for the Trial as it is
                assert entry == whole.entries[name][1], (line, name)
        book.since(KEY, before)
        assert dict(book.results(informer, experiment)) == results, line
    assert line > 100  # (the call ran, traced)
