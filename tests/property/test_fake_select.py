"""The fake API server's lists come in Kubernetes' order, by namespace then name, whichever
way they are sorted (``adapters.fake.store.select`` compares names alone in one namespace)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.fake.store import select

objects = st.lists(
    st.tuples(st.sampled_from([None, "", "a", "b"]), st.sampled_from(["x", "y", "z", "w"])),
    unique=True,
    max_size=12,
).map(
    lambda named: [
        {"apiVersion": "v1", "kind": "K", "metadata": {"name": name} | _space(namespace)}
        for namespace, name in named
    ]
)


def _space(namespace: str | None) -> dict[str, Any]:
    return {} if namespace is None else {"namespace": namespace}


@given(objects)
def test_a_list_is_by_namespace_then_name(found: list[dict[str, Any]]) -> None:
    listed = select(found, "v1", "K", None, {}, copy=False)
    order = sorted(found, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
    assert [id(obj) for obj in listed] == [id(obj) for obj in order]
    assert select(found, "v1", "K", None, {}) == order
