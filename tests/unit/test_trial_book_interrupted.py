"""A trial book's read stopped part-way (a stop signal's ``KeyboardInterrupt``, or any error)
leaves no page that says more than its ledger folded: what the book keeps for the next command
(``TrialBook.kept``) holds no Trial's old record at its new version, and the next read's ledger
is the full fold's. Stopped where it was seen (``advance``), in a Trial's parse, and at every
line the read runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from katib_resume.adapters.fake import FakeClock, FakeCluster
from katib_resume.app.loop import trial_book
from katib_resume.app.loop.informer import Informer
from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.trial_book import TrialBook
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.objects import version_of
from katib_resume.core.trial_ledger import TrialLedger, ledger_of
from tests.property.test_trial_book import NAME, NS, _apply, _experiment
from tests.support.interrupts import stopped_at

KEY = Key(NS, NAME)


class _Scene:
    """Three Trials read by a book, then two of them finished: the next read folds two."""

    def __init__(self) -> None:
        self.cluster = FakeCluster(FakeClock())
        self.informer, self.book = Informer(self.cluster.for_cache()), TrialBook()
        _apply(self.cluster, ("experiment", "", NS, ""))
        for name in ("t1", "t2", "t3"):
            _apply(self.cluster, ("create", name, NS, NAME))
        self.informer.sync()
        experiment = _experiment(self.cluster)
        assert experiment is not None
        self.experiment = experiment
        self.read()
        for name in ("t1", "t2"):
            _apply(self.cluster, ("outcome", name, NS, "0.5"))
        self.informer.sync()

    def read(self, parse: Callable[[Manifest], Trial] = Trial.model_validate) -> TrialLedger:
        _, ledger = self.book.read(self.informer, KEY, self.experiment, parse)
        assert ledger is not None
        return ledger

    def check(self) -> None:
        """No record kept at a Trial's version but its own; the next read folds all."""
        listed = self.cluster.list(API_VERSION, "Trial", NS, {LABEL_EXPERIMENT: NAME})
        full = ledger_of(self.experiment, [Trial.model_validate(t) for t in listed])
        now = {t["metadata"]["name"]: version_of(t) for t in listed}
        kept = self.book.kept(KEY)
        for name, (version, record) in (kept.records if kept is not None else {}).items():
            if version == now[name]:  # a record the next command takes for the Trial as it is
                assert record == full.record(name), name
        assert self.read().counts == full.counts


def _stop_at_second_parse() -> Callable[[Manifest], Trial]:
    """A parse that is stopped at its second Trial: the first one's new version is taken."""
    calls = [0]

    def parse(obj: Manifest) -> Trial:
        calls[0] += 1
        if calls[0] == 2:
            raise KeyboardInterrupt("SIGTERM")
        return Trial.model_validate(obj)

    return parse


def _stopped_advance(
    ledger: TrialLedger, experiment: Experiment, changed: Iterable[Trial], removed: Iterable[str]
) -> TrialLedger | None:
    raise KeyboardInterrupt("SIGTERM")


@pytest.mark.parametrize("where", ["parse", "advance"])
def test_a_read_stopped_part_way_keeps_no_record_at_a_version_it_did_not_fold(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = _Scene()
    parse: Callable[[Manifest], Trial] = Trial.model_validate
    if where == "parse":
        parse = _stop_at_second_parse()
    else:
        monkeypatch.setattr(trial_book, "advance", _stopped_advance)
    with pytest.raises(KeyboardInterrupt):
        scene.read(parse)
    monkeypatch.undo()
    scene.check()


def test_a_read_stopped_at_any_line_keeps_no_record_at_a_version_it_did_not_fold() -> None:
    line = 0
    while True:
        line += 1
        scene = _Scene()
        if not stopped_at(line, scene.read):
            break  # past the read's last line: every one was tried
        scene.check()
    assert line > 100  # (the read ran, traced)
