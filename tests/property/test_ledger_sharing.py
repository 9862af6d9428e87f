"""Ledgers ``updated`` from one another share what did not change (the records, the name lists
of the phases not touched): whatever is asked of which ledger in which order, each equals the
fold of its own Trials from scratch."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.model.trial import Trial
from katib_resume.core.trial_ledger import TrialLedger

NAMES = [f"t{i}" for i in range(5)]
PHASES = ["Succeeded", "Failed", "Running", None]


def _trial(name: str, phase: str | None) -> Trial:
    conditions = [{"type": phase, "status": "True"}] if phase else []
    return Trial.model_validate({"metadata": {"name": name}, "status": {"conditions": conditions}})


change = st.tuples(st.sampled_from(NAMES), st.one_of(st.none(), st.sampled_from(PHASES)))
# each step: which earlier ledger to update (branching), its changes, and which ledgers to read
steps = st.lists(
    st.tuples(st.integers(0, 5), st.lists(change, max_size=4), st.lists(st.integers(0, 5))),
    min_size=1,
    max_size=10,
)


@given(steps)
def test_every_ledger_in_a_tree_of_updates_equals_its_fold_from_scratch(
    history: list[tuple[int, list[tuple[str, str | None]], list[int]]],
) -> None:
    ledgers = [TrialLedger(None)]
    lives: list[dict[str, Trial]] = [{}]
    for parent, changes, reads in history:
        base = parent % len(ledgers)
        live = dict(lives[base])
        changed: dict[str, Trial] = {}
        removed: set[str] = set()
        for name, phase in changes:
            if phase is None and name in NAMES[:2]:
                live.pop(name, None)
                changed.pop(name, None)
                removed.add(name)
            else:
                live[name] = changed[name] = _trial(name, phase)
                removed.discard(name)
        ledgers.append(ledgers[base].updated(changed.values(), removed))
        lives.append(live)
        for read in reads:  # read any ledger, old or new, at any time
            index = read % len(ledgers)
            scratch = TrialLedger.of(None, lives[index].values())
            assert ledgers[index].counts == scratch.counts
            assert all(ledgers[index].has(n) == (n in lives[index]) for n in NAMES)
