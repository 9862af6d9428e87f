"""A Ctrl-C (SIGINT; SIGTERM and SIGHUP likewise) that lands while the fake cluster encodes a
Suggestion's assignments stops the command, as it does anywhere else.

``orjson`` turns what its ``default`` hook raises into a ``TypeError``, and ``codec.encode``
falls back to ``json`` on a ``TypeError`` (an integer beyond 64 bits). A ``run`` holding a state
directory was once seen going on for minutes after its SIGINT, deaf to it: the interrupt had
landed in the hook that writes the assignments' texts, and the fallback wrote the Suggestion.
"""

from __future__ import annotations

import signal
from typing import Any
from unittest import mock

import pytest

from katib_resume.adapters.fake import codec
from katib_resume.adapters.fake.chained import Chained, Texts

ITEMS = [
    {"name": f"t{i}", "parameterAssignments": [{"name": "x", "value": str(i)}]} for i in range(3)
]


def suggestion() -> dict[str, Any]:
    texts = Texts([codec.encode(item) for item in ITEMS])
    return {"kind": "Suggestion", "status": {"suggestions": Chained.of(texts, len(ITEMS))}}


def test_a_sigint_while_the_assignments_are_written_interrupts() -> None:
    fragment = Chained.fragment

    def interrupted(self: Chained) -> bytes:
        signal.raise_signal(signal.SIGINT)  # Python's handler runs at the next bytecode
        return fragment(self)

    with mock.patch.object(Chained, "fragment", interrupted), pytest.raises(KeyboardInterrupt):
        codec.encode(suggestion())


@pytest.mark.parametrize("error", [SystemExit(3), RuntimeError("the store is damaged")])
def test_what_the_hook_raises_but_a_type_error_is_raised_as_it_was(error: BaseException) -> None:
    with (
        mock.patch.object(Chained, "fragment", side_effect=error),
        pytest.raises(type(error)) as raised,
    ):
        codec.encode(suggestion())
    assert raised.value is error


def test_what_orjson_cannot_write_still_falls_back_to_json() -> None:
    value = {"big": 2**70, "status": {"suggestions": suggestion()["status"]["suggestions"]}}
    text = codec.encode(value)
    assert text.startswith(" ")
    assert codec.decode(text) == {"big": 2**70, "status": {"suggestions": ITEMS}}
    assert codec.decode(codec.encode(suggestion())) == {
        "kind": "Suggestion",
        "status": {"suggestions": ITEMS},
    }
