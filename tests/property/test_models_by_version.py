"""Parsing a Suggestion's new version from its tail (``app/embedded/models.py``) gives the model
a whole parse gives, whatever the next list is: longer, shorter, changed in the middle, absent."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.app.embedded.models import ModelsByVersion
from katib_resume.core.model import Suggestion


def _assignment(number: int, value: str) -> dict[str, Any]:
    return {
        "name": f"t{number}",
        "parameterAssignments": [{"name": "lr", "value": value}],
        "labels": {"n": str(number)},
    }


def _raw(version: int, items: list[dict[str, Any]] | None, extra: bool) -> dict[str, Any]:
    status: dict[str, Any] = {"suggestionCount": version}
    if items is not None:
        status["suggestions"] = items
    if extra:
        status["someExtra"] = {"kept": version}
    return {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Suggestion",
        "metadata": {"name": "s", "namespace": "ns", "uid": "u1", "resourceVersion": str(version)},
        "spec": {"algorithm": {"algorithmName": "random"}, "requests": version},
        "status": status,
    }


# each step: append n fresh items, drop the last n, change one in the middle, drop the list
steps = st.lists(
    st.tuples(
        st.sampled_from(["append", "append", "truncate", "change", "none"]), st.integers(0, 3)
    ),
    max_size=12,
)


@given(steps, st.booleans())
def test_a_version_parsed_from_its_tail_equals_its_whole_parse(
    history: list[tuple[str, int]], extra: bool
) -> None:
    models = ModelsByVersion()
    items: list[dict[str, Any]] = []
    made = 0
    last: Suggestion | None = None
    for version, (step, n) in enumerate(history, start=1):
        held = items
        if step == "append":  # as the API server stores it: the old items themselves, then more
            items = items + [_assignment(made + i, "a") for i in range(n)]
            made += n
        elif step == "truncate":
            items = items[: max(0, len(items) - n)]
        elif step == "change" and items:
            items = list(items)
            items[n % len(items)] = _assignment(n, "changed")
        raw = _raw(version, None if step == "none" else items, extra)
        parsed = models.parse(Suggestion, raw)
        whole = Suggestion.model_validate(raw)
        assert parsed == whole
        assert parsed.to_dict() == whole.to_dict()
        assert parsed.status.model_fields_set == whole.status.model_fields_set
        if step == "append" and last is not None and held:
            kept = last.status.suggestions
            assert all(a is b for a, b in zip(parsed.status.suggestions, kept, strict=False))
        if step != "none":  # the raw items themselves: a write carrying them on shares them
            assert all(a is b for a, b in zip(parsed.status.suggestions, items, strict=True))
        last = parsed
        if step == "none":
            items = []


def test_the_same_version_is_parsed_once() -> None:
    models = ModelsByVersion()
    raw = _raw(1, [_assignment(0, "a")], False)
    assert models.parse(Suggestion, raw) is models.parse(Suggestion, dict(raw))
