"""The state file's bytes do not depend on what the encoder kept from earlier saves."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

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
    """The file as encoding the whole payload at once writes it."""
    payload: dict[str, Any] = {
        "experiment": state.experiment,
        "algorithm": state.algorithm,
        "seed": state.seed,
        "space": state.space,
        "cursor": state.cursor,
        "issued": list(state.issued),
    }
    body = canonical(payload)
    document = {
        "format": store.FORMAT,
        "payload": payload,
        CHECKSUMS[store.VERSION].key: CHECKSUMS[store.VERSION].digest(body),
        "version": store.VERSION,
    }
    return canonical(document) + b"\n"


@given(
    batches=st.lists(st.lists(items, max_size=3), min_size=1, max_size=6),
    cursors=st.lists(cursors, min_size=6, max_size=6),
    steps=st.lists(st.sampled_from(["append", "equal copy", "read back"]), min_size=6, max_size=6),
    seed=st.integers(0, 3),
)
def test_every_save_encodes_as_the_whole_payload_would(
    batches: list[list[Any]], cursors: list[Any], steps: list[str], seed: int
) -> None:
    """Batches appended to one tuple (the encoding is extended), a tuple rebuilt with equal
    but other items (encoded anew), a state read back from its file (the file's bytes are
    kept) and then extended, and another search's states in between."""
    issued: tuple[Any, ...] = ()
    for batch, cursor, step in zip(batches, cursors, steps, strict=False):
        if step == "equal copy":
            issued = tuple(json.loads(json.dumps(issued)))
        elif step == "read back":
            saved = store.SearchState("ns/e", "tpe", seed, "space", cursor, issued)
            issued = store.decode(store.encode(saved)).issued + tuple(batch)
        else:
            issued += tuple(batch)
        state = store.SearchState("ns/e", "tpe", seed, "space", cursor, issued)
        other = store.SearchState("ns/o", "tpe", seed, "space", cursor, tuple(batch))
        assert store.encode(state) == whole(state)
        assert store.encode(other) == whole(other)
        assert store.decode(store.encode(state)) == state
