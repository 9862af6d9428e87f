"""The state file's bytes do not depend on what the encoder kept from earlier saves."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.fake import chained
from katib_resume.adapters.fake.chained import Chained, Texts
from katib_resume.adapters.fake.codec import encode
from katib_resume.adapters.local.suggestion import encoded, marks
from katib_resume.adapters.local.suggestion import state as store
from katib_resume.adapters.local.suggestion.assignments import assignment
from katib_resume.adapters.local.suggestion.checksum import CHECKSUMS
from katib_resume.adapters.local.suggestion.encoded import canonical

names = st.text("abcxyz-", min_size=1, max_size=6)
values = st.text(min_size=0, max_size=5)
items = st.builds(assignment, names, st.lists(st.tuples(names, values), max_size=3).map(tuple))
cursors = st.recursive(
    st.none() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def whole(state: store.SearchState) -> bytes:
    """The file as encoding the whole payload at once writes it, its marks made at once."""
    payload: dict[str, Any] = {
        "experiment": state.experiment,
        "algorithm": state.algorithm,
        "seed": state.seed,
        "space": state.space,
        "cursor": state.cursor,
        "issued": list(state.issued),
        "marks": marks.covering(canonical(list(state.issued))[1:-1], None).field(),
    }
    body = canonical(payload)
    document = {
        "format": store.FORMAT,
        "payload": payload,
        CHECKSUMS[store.VERSION].key: CHECKSUMS[store.VERSION].digest(body),
        "version": store.VERSION,
    }
    return canonical(document) + b"\n"


STEPS = ["append", "equal copy", "read back", "stored", "other texts"]


@given(
    batches=st.lists(st.lists(items, max_size=3), min_size=1, max_size=6),
    cursors=st.lists(cursors, min_size=6, max_size=6),
    steps=st.lists(st.sampled_from(STEPS), min_size=6, max_size=6),
    seed=st.integers(0, 3),
)
@example(  # a state read back, proved by the texts, then extended by a batch
    batches=[[assignment("a", (("x", "1"),))], [assignment("b", (("x", "2"),))]],
    cursors=[None] * 6,
    steps=["append", "stored", *["append"] * 4],
    seed=0,
)
@example(  # then a store's texts of other items, as many
    batches=[[assignment("a", (("x", "1"),)), assignment("b", (("x", "2"),))], [], []],
    cursors=[None] * 6,
    steps=["append", "stored", "other texts", *["append"] * 3],
    seed=0,
)
def test_every_save_encodes_as_the_whole_payload_would(
    batches: list[list[Any]], cursors: list[Any], steps: list[str], seed: int
) -> None:
    """Batches appended to one tuple (the encoding is extended), a tuple rebuilt with equal
    but other items (encoded anew), a state read back from its file (the file's bytes are
    kept) and then extended, the same proved equal to a store's texts (``stored``: the
    embedded runtime's history, which then stands for the tuple, extended and encoded
    without decoding an item), a store's texts of other items (``other texts``: not the
    encoding kept), and another search's states in between."""
    issued: tuple[Any, ...] = ()
    proved = False  # ``issued`` a store's texts the saved bytes proved, perhaps extended
    for batch, cursor, step in zip(batches, cursors, steps, strict=False):
        issued, proved = _next(
            store.SearchState("ns/e", "tpe", seed, "space", cursor, issued), step, proved
        )
        issued += tuple(batch)
        state = store.SearchState("ns/e", "tpe", seed, "space", cursor, issued)
        other = store.SearchState("ns/o", "tpe", seed, "space", cursor, tuple(batch))
        with mock.patch.object(chained, "_decoded", _undecodable if proved else chained._decoded):
            data = store.encode(state)
        assert data == whole(state)
        assert store.encode(other) == whole(other)
        assert store.decode(store.encode(state)) == state


def _next(state: store.SearchState, step: str, proved: bool) -> tuple[Any, bool]:
    """``state``'s assignments after ``step`` (before its batch), and whether they are then a
    store's texts proved by the saved bytes."""
    issued = state.issued
    if step == "equal copy":
        return tuple(json.loads(json.dumps(list(issued)))), False
    if step == "read back":
        return store.decode(store.encode(state)).issued, False
    if step == "stored":
        held = _stored_read_back(state)
        return held, isinstance(held, Chained)
    if step == "other texts":
        listed = list(reversed(list(issued)))
        return Chained.of(Texts([encode(item) for item in listed]), len(listed)), False
    return issued, proved


def _stored_read_back(saved: store.SearchState) -> Any:
    """``saved``'s assignments as a restart reads them back given a store's texts of them
    (``StateStore.load``: the history, if the texts prove equal to the file's bytes, else
    the items read), the file's bytes kept as their encoding."""
    head, unparsed, _, _ = store.decode_parts(store.encode(saved))
    history = Chained.of(Texts([encode(item) for item in saved.issued]), len(saved.issued))
    issued = unparsed.resolve(history)
    encoded.remember(head.identity(), issued, unparsed.body)
    return issued


def _undecodable(texts: Any) -> list[Any]:
    raise AssertionError("a store's texts were decoded to encode them")
