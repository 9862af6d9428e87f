"""The server's whole state, and its snapshot on the suggestion volume.

The state on the volume is this snapshot and the journal of the saves since
(``state_store.py``): a snapshot alone, as this module writes it, is a whole state, and the
layout of a volume that has never appended a record.

``<data_dir>/suggestion-state.json`` holds ``{format, version, xxh3_128, payload}``: the payload
is the state (whose search it is, the cursor, every assignment issued so far in order) and the
marks of its assignments (``marks.py``: fingerprints of their names and points, sorted; a
snapshot without them is read, its lookups searched), and
``xxh3_128`` is the XXH3 128-bit digest (``xxhash``), in hex, of the payload's canonical JSON
(sorted keys, no spaces). The checksum catches what JSON parsing cannot: a file truncated at a
valid boundary, a flipped digit in an RNG word, an edit by hand. Any doubt about the file is
reported as a ``StateProblem`` and the server rebuilds from the trial history instead; it never
resumes from state it cannot trust. The checksum guards against damage, not against someone who
can write the volume (who could as well write a good digest): a restart hashes every byte of the
state, so it is a fast non-cryptographic hash (0.03 ms at 5,000 assignments, SHA-256's 0.4 ms).

Version 2 files (the same document with ``sha256``, the payload's SHA-256, in place of
``xxh3_128``), version 3 files (an Optuna search's results told kept as a dict by index text),
version 4 files (a grid's cursor in the product's order), version 5 files (every CMA-ES
optimizer kept) and version 6 files (an Optuna search's results told kept as a JSON list) are
read, their cursor upgraded by the search (``algorithms.upgraded``); the first save after
reading one writes a snapshot of ``VERSION`` (``state_store``), so a volume is upgraded by its
next save.

Writing a snapshot is atomic so that a crash at any instant leaves either the old file or the
new one, never a mixture: write a temporary file in the same directory (``os.replace`` is only
atomic within a file system), flush and ``fsync`` it so its bytes are on disk before the rename
makes them visible, ``os.replace`` it over the old file, then ``fsync`` the directory so the
rename itself survives a power cut. If any step fails the temporary file is removed and the old
file stays.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import orjson

from katib_resume.adapters import heap
from katib_resume.adapters.local.suggestion import encoded, marks
from katib_resume.adapters.local.suggestion.assignments import all_well_formed
from katib_resume.adapters.local.suggestion.checksum import CHECKSUMS
from katib_resume.adapters.local.suggestion.column import unpacked_in
from katib_resume.adapters.local.suggestion.marks import Marks
from katib_resume.adapters.local.suggestion.unparsed import Unparsed
from katib_resume.core.manifest import Manifest

FILE_NAME = "suggestion-state.json"
FORMAT = "katib-resume/suggestion-state"
VERSION = 7
"""The payload's ``marks`` are no version's: every snapshot written holds them, one without them is
read and searched whole, and a build that knows no marks reads a snapshot with them by parsing
it whole, and ignores them. 7: an Optuna search's results told are a column of doubles, packed
(``column.py``); 6, still read, kept them as a JSON list, which the search upgrades when it is
read (``algorithms.upgraded``). 6: a CMA-ES search's cursor keeps the optimizers a later ask may
restore, a tombstone of every older one, and no entry a rebuild cannot read
(``cma_optimizers``); 5, still read, kept every trial's, which the search prunes when it is read
(``algorithms.upgraded``). 5: the grid's cursor is a position in the seed's order of its cells;
4, still read, held a position in the product's own order, which the search upgrades when it is
read (it starts its order again, skipping the cells issued: ``algorithms.upgraded``). 4: an
Optuna search's cursor keeps its told results as a column by assignment index (``told_column``);
3, still read, kept them as a dict by index text, which the search upgrades when it is read
(``algorithms.upgraded``). 3: the checksum is XXH3-128 (``xxh3_128``: ``checksum.py``). 2:
SHA-256 (``sha256``), still read; the random search's cursor is the index of its next point (1
held its generator's state, which is reported as an unsupported format and rebuilt from the
trial history)."""


@dataclass(frozen=True, slots=True)
class SearchState:
    """Where one search stands. ``issued`` is never mutated; a new batch makes a new state."""

    experiment: str
    algorithm: str
    seed: int
    space: str
    cursor: Any
    issued: tuple[Manifest, ...] = ()

    def identity(self) -> tuple[str, str, int, str]:
        """Which search this is: a saved state is resumed only by the same search."""
        return self.experiment, self.algorithm, self.seed, self.space


canonical = encoded.canonical
"""The payload's canonical JSON (sorted keys, no spaces), of which the checksum is the digest."""


class StateProblem(Exception):
    """Why the saved state cannot be used: ``missing`` or ``corrupt``, with the detail."""

    def __init__(self, kind: Literal["missing", "corrupt"], detail: str) -> None:
        super().__init__(f"{kind} ({detail})")
        self.kind, self.detail = kind, detail


def encode(state: SearchState) -> bytes:
    return encode_snapshot(state)[0]


def encode_snapshot(state: SearchState) -> tuple[bytes, str]:
    """The file's bytes for ``state``, and its payload's digest (a journal names its snapshot
    by it)."""
    fields = [
        ("experiment", state.experiment),
        ("algorithm", state.algorithm),
        ("seed", state.seed),
        ("space", state.space),
        ("cursor", state.cursor),
    ]
    body = encoded.payload(fields, state.issued, state.identity())
    digest = CHECKSUMS[VERSION].digest(body)
    return _document(body, digest) + b"\n", digest


def _document(body: bytes, digest: str, version: int = VERSION) -> bytes:
    """``canonical`` of the whole document, around the payload already encoded as ``body``
    (encoding the payload, which holds every assignment, once rather than twice): the keys
    in sorted order, no spaces, as ``json.dumps`` with ``sort_keys`` writes them."""
    head = {"format": FORMAT}
    tail = {CHECKSUMS[version].key: digest, "version": version}
    return canonical(head)[:-1] + b',"payload":' + body + b"," + canonical(tail)[1:]


def decode(data: bytes) -> SearchState:
    return decode_snapshot(data)[0]


def decode_snapshot(data: bytes) -> tuple[SearchState, str]:
    """The state in ``data`` and its payload's digest; raises ``StateProblem("corrupt", ...)``
    on any doubt."""
    head, issued, digest, _ = decode_parts(data)
    state = replace(head, issued=_parsed(issued.parse))
    encoded.remember(state.identity(), state.issued, issued.body, issued.marks)
    return state, digest


def decode_parts(data: bytes) -> tuple[SearchState, Unparsed, str, int]:
    """The state in ``data`` without its assignments (``issued`` empty), the assignments
    as their bytes (``unparsed.py``: parsed when the history is known), the payload's
    digest and the file's version; raises ``StateProblem("corrupt", ...)`` on any doubt.

    A file as ``encode`` writes it holds the payload's canonical bytes, so those are checked
    as they are and the assignments' bytes cut out of them; a file in any other layout
    (reformatted, keys reordered) is parsed whole and its payload re-encoded to be checked, as
    the format allows."""
    for version in CHECKSUMS:
        found = _canonical_payload(data, version)
        if found is not None:
            split = _split(data, found[0])
            if split is not None:
                fields, items, marked = split
                issued = Unparsed(items, None if marked is None else _marks(marked, len(items)))
                return _state(fields, issued=[]), issued, found[1], version
    payload, digest, version = _document_payload(data)
    state = _state(payload)
    body = canonical(list(state.issued))[1:-1]
    marked = _marks(payload["marks"], len(body)) if "marks" in payload else None
    return replace(state, issued=()), Unparsed(body, marked), digest, version


def _marks(value: Any, end: int) -> Marks:
    """The payload's ``marks`` (``marks.py``), covering its assignments, the first ``end``
    bytes."""
    try:
        return marks.read(value, end)
    except ValueError as error:
        raise StateProblem("corrupt", str(error)) from None


def _document_payload(data: bytes) -> tuple[Any, str, int]:
    """The payload of a file not laid out as ``encode`` lays it out, its digest and its
    version, its checksum verified."""
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise StateProblem("corrupt", "not valid JSON") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise StateProblem("corrupt", "not a suggestion state file")
    version = document.get("version")
    if type(version) is not int or version not in CHECKSUMS:
        raise StateProblem("corrupt", f"unsupported format version {version!r}")
    payload = document.get("payload")
    checked = _digest(payload, version)
    if checked is None or checked != document.get(CHECKSUMS[version].key):
        raise StateProblem("corrupt", "checksum mismatch")
    return payload, checked, version


def _canonical_payload(data: bytes, version: int) -> tuple[slice, str] | None:
    """Where the payload's bytes stand in a file of ``version`` laid out as ``encode`` lays
    it out, and their digest, its checksum verified; ``None`` if it is laid out otherwise or
    the check fails (``decode`` decides). Read in place: the assignments are most of a file's
    bytes."""
    head = canonical({"format": FORMAT})[:-1] + b',"payload":'
    size = CHECKSUMS[version].size
    tail = _document(b"", "0" * size, version)[len(head) :] + b"\n"
    if not data.startswith(head) or len(data) < len(head) + len(tail):
        return None
    body = slice(len(head), len(data) - len(tail))
    digest = CHECKSUMS[version].digest(memoryview(data)[body])
    if data[body.stop :] != tail.replace(b"0" * size, digest.encode()):
        return None
    return body, digest


def _split(data: bytes, body: slice) -> tuple[Any, memoryview, Any] | None:
    """The fields but ``issued`` and ``marks`` of the canonical payload at ``body`` in
    ``data``, parsed, ``issued``'s items as bytes (commas between them), in place, and the
    marks (``None``: the snapshot has none); ``None`` if it is not laid out so, or the fields
    are not JSON (``decode_parts`` then parses it whole). The items lie between the first
    ``,"issued":[`` and the ``]`` before the marks (``],"marks":``) or, in a snapshot without
    them, before the seed (``],"seed":``): the keys are sorted, and no marker can stand inside
    a string, where a quote is escaped. The seed's key is searched back from the end (only
    ``space`` after it), the marks' back from it (over their base64, which holds no bracket),
    and the first marker from the start, not back from the end through every item (0.05 ms
    at 5,000 assignments, where that took 0.35): before the payload's own it can stand only
    as a key inside the cursor, and a cut there leaves the cursor's brackets open in the
    fields, which are then no JSON (so ``None``, and the payload is parsed whole)."""
    start = data.find(_ISSUED, body.start, body.stop)
    seed = data.rfind(_SEED, body.start, body.stop)
    before = data[seed - 1] if seed > body.start else None
    if before == _MARKED:
        end = data.rfind(_MARKS, body.start, seed)
        marked = None if end < 0 else _marks_in(data, end + len(_MARKS), seed)
        if marked is None:
            return None
    elif before == _UNMARKED:
        end, marked = seed - 1, None
    else:
        return None
    if start < 0 or start + len(_ISSUED) > end:
        return None
    try:
        rest = exact_loads(data[body.start : start] + data[seed : body.stop])
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(rest, dict) or rest.keys() != _FIELDS:
        return None
    return rest, memoryview(data)[start + len(_ISSUED) : end], marked


def _marks_in(data: bytes, start: int, stop: int) -> dict[str, str] | None:
    """The marks whose canonical JSON is ``data[start:stop]``, read in place (two texts of
    base64, which JSON writes as they are); ``None`` if they are written otherwise (an escape,
    another key: the payload is then parsed whole)."""
    if not data.startswith(_NAMES, start) or not data.endswith(_END, start, stop):
        return None
    middle = data.find(_POINTS, start, stop)
    if middle < 0:
        return None
    texts = data[start + len(_NAMES) : middle], data[middle + len(_POINTS) : stop - len(_END)]
    if any(b'"' in text or b"\\" in text or not text.isascii() for text in texts):
        return None
    names, points = (text.decode("ascii") for text in texts)
    return {"names": names, "points": points}


def exact_loads(text: bytes) -> Any:
    """``json.loads(text)`` of a canonical text (``NaN`` refused), read by ``orjson`` when that
    gives the same value: a few times faster on a cursor of thousands of results. ``orjson``
    reads an integer beyond 64 bits as a float (a cursor may hold one, ``json`` reads it
    exactly), so its value is kept only if it writes the text back byte for byte (then it is
    the value the text means, of the same types); else ``json`` reads it. Written back in the
    order it was read (a parsed dict keeps its text's order): sorting the keys again, at each
    level, would only cost time (a third of the read of a cursor of thousands of results)."""
    try:
        value = orjson.loads(text)
        if orjson.dumps(value) == text:
            return value
    except (orjson.JSONDecodeError, TypeError):
        pass
    return _loads(text)


def _loads(text: bytes) -> Any:
    return json.loads(text, parse_constant=_no_constant)


_ISSUED, _MARKS, _SEED = b',"issued":[', b'],"marks":', b',"seed":'
_NAMES, _POINTS, _END = b'{"names":"', b'","points":"', b'"}'
_MARKED, _UNMARKED = ord("}"), ord("]")
"""What ends the value before the seed: the marks, or the items in a snapshot without marks."""
_FIELDS = frozenset(("algorithm", "cursor", "experiment", "seed", "space"))


def _no_constant(name: str) -> Any:
    """``NaN`` and the infinities have no canonical form: such a file is not ``encode``'s."""
    raise ValueError(f"{name} in a state file")


def _digest(payload: Any, version: int) -> str | None:
    """The payload's checksum in ``version``'s hash; ``None`` when it has no canonical form
    (a ``NaN`` was read)."""
    try:
        return CHECKSUMS[version].digest(canonical(payload))
    except ValueError:
        return None


def _state(payload: Any, issued: Any = None) -> SearchState:
    """The state of a parsed payload (``issued``: its assignments, if not in it)."""
    try:
        fields = {k: payload[k] for k in ("experiment", "algorithm", "seed", "space", "cursor")}
        issued = payload["issued"] if issued is None else issued
    except (TypeError, KeyError):
        raise StateProblem("corrupt", "fields are missing") from None
    try:
        fields["cursor"] = unpacked_in(fields["cursor"])
    except ValueError as error:
        raise StateProblem("corrupt", str(error)) from None
    texts = (fields["experiment"], fields["algorithm"], fields["space"])
    if not all(isinstance(t, str) for t in texts) or type(fields["seed"]) is not int:
        raise StateProblem("corrupt", "fields have the wrong types")
    if not isinstance(issued, list) or not all_well_formed(issued):
        raise StateProblem("corrupt", "the issued assignments are malformed")
    return SearchState(**fields, issued=tuple(issued))


def read(path: Path) -> tuple[SearchState, str, int]:
    """The snapshot at ``path``: its state, its payload's digest and its size in bytes."""
    head, issued, digest, size, _ = read_parts(path)
    with heap.paused():  # a parse of every assignment (adapters/heap.py)
        state = replace(head, issued=_parsed(issued.parse))
    encoded.remember(state.identity(), state.issued, issued.body, issued.marks)
    return state, digest, size


def read_parts(path: Path) -> tuple[SearchState, Unparsed, str, int, int]:
    """The snapshot at ``path``, its assignments unparsed (``decode_parts``), its payload's
    digest, its size in bytes and its version."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StateProblem("missing", f"no {path.name} in {path.parent}") from None
    except OSError as error:
        raise StateProblem("corrupt", f"unreadable: {error.strerror or error}") from None
    with heap.paused():  # a parse of the cursor (adapters/heap.py)
        head, issued, digest, version = decode_parts(data)
    return head, issued, digest, len(data), version


def _parsed(parse: Callable[[], tuple[Manifest, ...]]) -> tuple[Manifest, ...]:
    """``parse()``, its ``ValueError`` a ``StateProblem``."""
    try:
        return parse()
    except ValueError as error:
        raise StateProblem("corrupt", str(error)) from None
