"""``core.digest``: what a digest tells apart, and that it is kept exactly as objects change."""

from __future__ import annotations

from katib_resume.core.digest import EMPTY, Digest, Digests, fingerprint
from katib_resume.core.manifest import Manifest

KIND = ("v1", "Service")


def _obj(name: str = "a", namespace: str | None = "ns", uid: str = "u1", rv: str = "1") -> Manifest:
    meta = {"name": name, "uid": uid, "resourceVersion": rv}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta}


def _of(*objects: Manifest) -> Digest:
    digests = Digests()
    for obj in objects:
        digests.moved(KIND, None, obj)
    return digests.of(KIND)


def test_every_part_of_an_identity_and_its_version_tells_two_objects_apart() -> None:
    base = fingerprint(_obj())
    for other in (_obj(name="b"), _obj(namespace="x"), _obj(uid="u2"), _obj(rv="2")):
        assert fingerprint(other) != base
    assert fingerprint(_obj(namespace=None)) == fingerprint(_obj(namespace=""))
    assert fingerprint({"metadata": {"name": "a"}}) == fingerprint(
        {"metadata": {"name": "a", "namespace": "", "uid": "", "resourceVersion": ""}}
    )


def test_a_digest_counts_and_sums_in_any_order_and_forgets_an_emptied_kind() -> None:
    a, b, c = _obj("a"), _obj("b"), _obj("c", rv="7")
    assert _of(a, b, c) == _of(c, a, b) and _of(a, b, c).size == 3
    assert _of(a, b) != _of(a, c) and _of(a) != _of(a, b)
    assert _of() == EMPTY == Digest(0, 0)
    digests = Digests()
    digests.moved(KIND, None, a)
    digests.moved(KIND, a, b)  # replaced: one object, b's
    assert digests.of(KIND) == _of(b)
    digests.moved(KIND, b, None)
    assert digests.of(KIND) == EMPTY and not digests._by_kind
    assert digests.of(("v1", "Pod")) == EMPTY


def test_the_sum_wraps_at_64_bits() -> None:
    many = [_obj(f"n{i}", rv=str(i)) for i in range(200)]
    digest = _of(*many)
    assert 0 <= digest.total < 2**64
    assert digest.total == sum(fingerprint(o) for o in many) % 2**64


def test_objects_added_at_once_make_the_digest_they_make_one_by_one() -> None:
    objects = [_obj(name=f"n{i}", uid=f"u{i}", rv=str(i)) for i in range(40)]
    at_once = Digests()
    at_once.added(KIND, objects[:25])
    at_once.added(KIND, [])
    at_once.added(KIND, objects[25:])
    assert at_once.of(KIND) == _of(*objects)
    at_once.moved(KIND, objects[3], None)
    assert at_once.of(KIND) == _of(*objects[:3], *objects[4:])
    assert Digests().of(KIND) == EMPTY


def test_a_fingerprint_is_the_same_in_every_process_so_a_digest_can_be_stored() -> None:
    """Not Python's salted ``hash``: another process (another hash seed) computes the same
    value, which is BLAKE2b's of the fields joined by NUL (pinned, so a stored digest keeps its
    meaning across releases)."""
    import hashlib
    import os
    import subprocess
    import sys

    text = b"ns\0a\0u1\x001"
    pinned = int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")
    assert fingerprint(_obj()) == pinned
    meta = "{'namespace': 'ns', 'name': 'a', 'uid': 'u1', 'resourceVersion': '1'}"
    code = f"from katib_resume.core.digest import fingerprint as f; print(f({{'metadata':{meta}}}))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == pinned
