"""What the service made of each Trial of an Experiment's last request, under the Trial's bytes.

Katib sends every Trial in every call, so a call that converted each one (what the server takes
of it: its item, its start, its result) would pay for the whole history: about 45 µs a Trial
beyond the decode, 0.2 s a call at 5,000. Over gRPC each Trial arrives as its canonical bytes
(``adapters/grpc/trial_bytes.py``); a Trial whose bytes were in the last call is the same Trial,
so what was made of it then is looked up by those bytes in one C-level pass over the request,
and only the new or changed Trials are decoded. The memo holds the last call's Trials only, so
it stays the size of the Experiment, and it is keyed by the objective's metric, which the
results depend on.

A caller in the same process (tests, a scheduler embedding the service) may pass the Trials as
dictionaries; those are converted each call, as nothing names their content cheaply.

A memo given a ``Store`` (``memo_file.MemoFile``: a file on the Experiment's volume) keeps
there what it made of each Trial it decoded, under the digest of the Trial's bytes, and its
first read looks the request's Trials up there too: a restarted service decodes only the
Trials it had not seen before it stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from operator import attrgetter
from typing import NamedTuple, Protocol, cast

from xxhash import xxh3_128_hexdigest

from katib_resume.adapters import heap
from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.grpc import trial_message
from katib_resume.adapters.grpc.api import Wire
from katib_resume.adapters.grpc.codec import trial_manifest
from katib_resume.adapters.local.suggestion.encoded import canonical
from katib_resume.core.history import History, names_of
from katib_resume.core.manifest import Manifest
from katib_resume.core.objective import parse_number

READING = 1
"""The version of a Trial's reading (``trial_message``, ``known``): a memo kept on the volume
under another is not read (``memo_file``)."""
_FAILED = ("Failed", "Killed")
_VALUED = ("Succeeded", "EarlyStopped")
Result = tuple[str, float | None]


class Known(NamedTuple):
    """One Trial as the service reads it: what the server takes of it, not the whole Trial. A
    tuple, so that finding the misses of a request (``None in found``) compares at C speed."""

    item: str
    """The Trial's assignment as the Suggestion's list holds it (``name``,
    ``parameterAssignments``, and PBT's ``labels`` where it has any), as its canonical JSON
    text (``encoded.canonical``, as the saved state holds its own): the history the server is
    started with, which a restart proves to be where the saved assignments start by comparing
    texts, and decodes only if they differ (``history``)."""
    started: str | None
    """The Trial's ``startTime``, if it has one (a history rebuilt orders by it)."""
    result: Result | None
    """(name, objective value) of a Trial whose result the searches learn from (``None``
    for a failed one: the server makes NaN a failure too, ``nonfinite``), else ``None``."""
    succeeded: Result | None
    """(name, value) of a Succeeded Trial with a value: what ``medianstop`` averages."""


ITEM, STARTED = attrgetter("item"), attrgetter("started")
RESULT, SUCCEEDED = attrgetter("result"), attrgetter("succeeded")
Entry = tuple[str, Known]
"""A Trial's digest (``digest``) and what the memo made of it."""


class Store(Protocol):
    """Where a memo keeps what it made of each Trial, across restarts (``memo_file``)."""

    def load(self) -> dict[str, Known]:
        """What it holds, by digest."""
        ...

    def save(self, fresh: list[Entry], whole: Callable[[], list[Entry]]) -> None:
        """Keep ``fresh``, the Trials a call decoded (``whole()``: every Trial of the call);
        called after every call that decoded one, and after the first."""
        ...

    def discard(self) -> None:
        """Forget everything kept (what it held cannot be used)."""
        ...


digest: Callable[[bytes], str] = xxh3_128_hexdigest
"""The name of a Trial's content in a ``Store``: the XXH3-128 digest of its bytes, hex. The C
function itself, not a Python function calling it: a restart's first read maps it over every
Trial of the request."""


def known(manifest: Manifest, metric: str | None) -> Known:
    """What the service reads of a Trial (``manifest``): its item, its start, and its result
    by Katib's rules (``results.trial_results`` in the embedded runtime)."""
    name, spec = manifest["metadata"]["name"], manifest.get("spec", {})
    status = manifest.get("status", {})
    item = {"name": name, "parameterAssignments": spec.get("parameterAssignments", [])}
    if spec.get("labels"):  # PBT's lineage
        item["labels"] = spec["labels"]
    text = canonical(item).decode()
    started = status.get("startTime") or None
    condition = status.get("condition", "")
    if condition in _FAILED:
        return Known(text, started, (name, None), None)
    if condition not in _VALUED:
        return Known(text, started, None, None)
    metrics = status.get("observation", {}).get("metrics", [])
    values = [parse_number(m.get("value")) for m in metrics if m.get("name") == metric]
    if not values or values[0] is None:
        return Known(text, started, None, None)
    result = (name, values[0])
    return Known(text, started, result, result if condition == "Succeeded" else None)


class TrialMemo:
    """One Experiment's Trials of its last request, by bytes, read with ``metric``, kept in
    ``store`` if given (its first read looks each Trial up there too)."""

    def __init__(self, metric: str | None, store: Store | None = None) -> None:
        self.metric, self.store = metric, store
        self.by_bytes: dict[bytes, Known] = {}
        self._restored = store is None  # (the store is read by the first read)

    def read(self, trials: Sequence[bytes | Wire]) -> list[Known]:
        """Each Trial of a request, the ones seen in the last call (or kept in the store)
        looked up, not decoded."""
        if not all(map(isinstance, trials, repeat(bytes))):
            return [self._made(trial) for trial in trials]
        keys = cast(Sequence[bytes], trials)
        found = list(map(self.by_bytes.get, keys))
        missing: list[int] = []
        restoring = not self._restored
        if None in found:
            with heap.paused():  # dicts and lists per Trial, acyclic (adapters/heap.py)
                missing = [i for i, entry in enumerate(found) if entry is None]
                if restoring:
                    missing = self._restore(keys, found, missing)
                for index in missing:
                    found[index] = self._made(keys[index])
        read = cast(list[Known], found)
        self.by_bytes = dict(zip(keys, read, strict=True))
        if self.store is not None and (missing or restoring):
            fresh = [(digest(keys[index]), read[index]) for index in missing]
            self.store.save(fresh, lambda: list(zip(map(digest, keys), read, strict=True)))
        return read

    def _restore(
        self, keys: Sequence[bytes], found: list[Known | None], missing: list[int]
    ) -> list[int]:
        """The store's Trials put in ``found`` (once, by the first read: a restart); the
        indexes still missing."""
        self._restored = True
        assert self.store is not None
        held = self.store.load()
        if not held:
            return missing
        for index, entry in zip(
            missing, map(held.get, map(digest, map(keys.__getitem__, missing))), strict=True
        ):
            found[index] = entry
        return [index for index in missing if found[index] is None]

    def _made(self, trial: bytes | Wire) -> Known:
        made = (
            trial_message.manifest_of(trial) if isinstance(trial, bytes) else trial_manifest(trial)
        )
        return known(made, self.metric)


def history(read: Sequence[Known]) -> History:
    """The Trials' items (``Known.item``), in the request's order, as their texts, decoded
    when read (``adapters.fake.chained``: the embedded store's history, whose texts a restart
    compares with the saved assignments as they are)."""
    return Chained.of(Texts(list(map(ITEM, read))), len(read))


def started(read: Sequence[Known], items: Sequence[Manifest]) -> dict[str, str]:
    """Each Trial's start by name (``"~"``, after every time, where it has none); ``items``:
    ``history(read)``, whose names are read from its texts (``names_of``)."""
    starts = (start or "~" for start in map(STARTED, read))
    return dict(zip(names_of(items), starts, strict=True))


def results(read: Sequence[Known], *, succeeded_only: bool = False) -> dict[str, float | None]:
    """Trial name -> objective value (``None``: failed), by one C-level pass."""
    return dict(filter(None, map(SUCCEEDED if succeeded_only else RESULT, read)))
