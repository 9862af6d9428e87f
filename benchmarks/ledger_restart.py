"""What a restart's trial ledger costs before its first new Trial, at 100 / 1,000 / 5,000 records.

A restart's ledger starts from kept records (``TrialLedger.restored``) or from sealed blocks'
aggregate (``TrialLedger.based``), then answers the reconcile's first ``unused`` of the
Suggestion's assignments (every one has a Trial but the newest), held as a writer's open holds
them (their stored texts, ``adapters/fake/chained.py``, the names read from the texts): proving
them all, or, told by the close before which stored ones have a Trial
(``TrialLedger.vouched``), only the newest. In
microseconds, the records already decoded, wall-clock medians of ``--repeats`` runs (the
ledger's work is all in this process; nothing waits), with each size's growth over the
smallest's (``*_ratio``); JSON on stdout.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from benchmarks.median_time import median_seconds
from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.fake.codec import encode
from katib_resume.core.history import Stored
from katib_resume.core.trial_ledger import LedgerBase, TrialLedger, TrialRecord
from katib_resume.core.trial_phases import TrialPhase

SIZES = (100, 1_000, 5_000)


def _timed(make: Callable[[], object], repeats: int) -> float:
    return median_seconds(make, repeats) * 1e6


def row(n: int, repeats: int) -> dict[str, float]:
    """One size's figures, in microseconds."""
    records = [TrialRecord(f"t-{i:06d}", TrialPhase.SUCCEEDED, i / n) for i in range(n)]
    base = LedgerBase.of(records)
    items = [*({"name": record.name} for record in records), {"name": "new"}]
    texts = Texts([encode(item) for item in items], chain=1)  # as a writer's open makes them
    chain = Chained.of(texts, n + 1)
    vouched = Stored(1, n)
    return {
        "records": n,
        "restored_us": _timed(lambda: TrialLedger.restored(None, records, None), repeats),
        "based_us": _timed(lambda: TrialLedger.based(None, base, None), repeats),
        "based_has_us": _timed(lambda: TrialLedger.based(None, base, None).has("t-0"), repeats),
        "restored_unused_us": _timed(
            lambda: TrialLedger.restored(None, records, None).unused(chain, 1), repeats
        ),
        "based_unused_us": _timed(
            lambda: TrialLedger.based(None, base, None).unused(chain, 1), repeats
        ),
        "vouched_unused_us": _timed(
            lambda: TrialLedger.based(None, base, None).vouched(vouched).unused(chain, 1), repeats
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--repeats", type=int, default=101)
    args = parser.parse_args()
    rows = [row(n, args.repeats) for n in args.sizes]
    for fields in rows:
        for name in [key for key in fields if key.endswith("_us")]:
            fields[f"{name}_ratio"] = fields[name] / rows[0][name]
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
