"""``TrialLedger.vouched``: a ledger told that a stored chain's first items all have a Trial
answers as the ledger that proves it, and proves only the rest.

A restart hands the ledger what the close before proved (``app.embedded.vouched``): the first
``held`` items of the Suggestion's stored chain are all named for Trials of the ledger. Drawn
here: bases of records, the chain's order of names, a truthful claim (any prefix of the items
before the first without a Trial), and operations (folds, removals, ``updated``, ``advance``).
The vouched ledger and the plain one answer ``unused`` alike, after every operation, of the
chain, of a shorter and a longer revision of it, of another chain and of a plain tuple; the
vouched one reads the names from where the claim ends until a Trial is removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.core.history import History, Item, Stored
from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.trial_ledger import LedgerBase, TrialLedger, TrialRecord
from katib_resume.core.trial_phases import TrialPhase
from tests.property.test_ledger_based import (
    ASKED,
    BASIS,
    NEW,
    Operation,
    _call,
    _trial,
    bases,
    objectives,
    operations,
)

CHAIN = 7


class Chain(History):
    """Items as a store holds them: ``stored`` says which chain's first items they are, and
    ``names`` notes where each read of the names starts."""

    def __init__(self, items: Sequence[Item], chain: int, held: int) -> None:
        self.items, self.chain, self.held = tuple(items), chain, held
        self.starts: list[int] = []

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | Sequence[Item]:
        return self.items[index]

    def extended(self, fresh: Sequence[Item]) -> Chain:
        return Chain((*self.items, *fresh), self.chain, self.held)

    def extends(self, other: Sequence[Item]) -> bool:
        return other is self

    def names(self, start: int = 0) -> list[str]:
        self.starts.append(start)
        return super().names(start)

    def stored(self) -> Stored | None:
        return Stored(self.chain, self.held)


def _first_unused(ledger: TrialLedger, items: Sequence[Item]) -> int:
    return next((i for i, item in enumerate(items) if not ledger.has(item["name"])), len(items))


def _histories(items: tuple[Item, ...], cut: int) -> list[Sequence[Item]]:
    """The chain, a shorter revision, a longer one (items appended, not stored yet), another
    chain of the same items, and a plain tuple."""
    fresh = tuple({"name": name} for name in NEW)
    return [
        Chain(items, CHAIN, len(items)),
        Chain(items[:cut], CHAIN, cut),
        Chain(items, CHAIN, len(items)).extended(fresh),
        Chain(items, CHAIN + 1, len(items)),
        items,
    ]


def _unused(ledger: TrialLedger, histories: list[Sequence[Item]]) -> list[object]:
    return [ledger.unused(h, wanted) for h in histories for wanted in (1, len(h))]


@settings(max_examples=300)
@given(objectives, bases(), st.permutations(ASKED), operations, st.data())
def test_a_vouched_ledger_answers_unused_as_the_one_that_proves(
    objective: ObjectiveSpec | None,
    parts: list[list[TrialRecord]],
    order: list[str],
    history: list[Operation],
    data: st.DataObject,
) -> None:
    base = LedgerBase.joined(LedgerBase.of(part) for part in parts)
    plain = TrialLedger.based(objective, base, BASIS)
    items: tuple[Item, ...] = tuple({"name": name} for name in order)
    held = data.draw(st.integers(0, _first_unused(plain, items)), label="vouched")
    ledger = plain.vouched(Stored(CHAIN, held))
    cut = data.draw(st.integers(0, len(items)), label="shorter")
    assert _unused(ledger, _histories(items, cut)) == _unused(plain, _histories(items, cut))
    for kind, arg in history:
        if kind in ("record", "records"):
            continue
        trials = [_trial(name, *change) for name, change in arg if change is not None]
        removed = [name for name, change in arg if change is None]
        ledger, plain = _call(ledger, kind, trials, removed), _call(plain, kind, trials, removed)
        assert _unused(ledger, _histories(items, cut)) == _unused(plain, _histories(items, cut))


def test_a_restart_reads_the_names_from_where_the_claim_ends_until_a_trial_goes() -> None:
    """The first ``unused`` of the chain reads the names after the vouched ones only; of
    another chain, all of them; after a removal, all of them again."""
    records = [TrialRecord(f"s{i:03}", TrialPhase.SUCCEEDED, 0.5) for i in range(100)]
    base = LedgerBase.of(records)
    items: tuple[Item, ...] = (*({"name": r.name} for r in records), {"name": "new0"})
    other, chain = Chain(items, CHAIN + 1, len(items)), Chain(items, CHAIN, len(items))
    assert TrialLedger.based(None, base, BASIS).vouched(Stored(CHAIN, 90)).unused(other, 5) == [
        {"name": "new0"}
    ]
    ledger = TrialLedger.based(None, base, BASIS).vouched(Stored(CHAIN, 90))
    assert ledger.unused(chain, 5) == [{"name": "new0"}]
    assert (chain.starts, other.starts) == ([90], [0])
    ledger = ledger.updated([_trial("new0", "Succeeded", "0.1", True)], ["s000"])
    again = Chain(items, CHAIN, len(items))
    assert ledger.unused(again, 5) == [{"name": "s000"}] and again.starts == [0]
