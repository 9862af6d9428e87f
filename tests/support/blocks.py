"""Blocks backed by a list (``core.blocks.Block``), for the tests of a holder without a store.

``sealed`` makes the block of some objects of one kind, namespace and index fields, as a store
seals them: its digest is its members', its fields theirs, and ``load`` hands back the very
objects given (counted in ``loads``, so a test can require that nothing read a block it did not
need); ``holds`` answers from their names. ``sealed_groups`` seals any objects: grouped as a
block must be, each group cut in ``parts`` blocks. ``SealingCluster`` is a fake cluster whose
first list (``app.loop.informer.BlockSource``) hands some objects over in such blocks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import count

from katib_resume.adapters.fake import FakeCluster
from katib_resume.core.blocks import Block
from katib_resume.core.digest import Digests
from katib_resume.core.manifest import Manifest
from katib_resume.core.object_index import Index
from katib_resume.core.objects import INDEXED_LABELS, key_of

_IDS = count(1)


def sealed(
    members: Sequence[Manifest],
    loads: Counter[int],
    labels: tuple[str, ...] = INDEXED_LABELS,
) -> Block:
    """The block of ``members`` (at least one; all of one kind, namespace and index fields)."""
    api_version, kind, namespace, _ = key_of(members[0])
    index = Index(labels)
    fields = frozenset(index.fields(members[0]))
    if any(key_of(m)[:3] != (api_version, kind, namespace) for m in members) or any(
        frozenset(index.fields(m)) != fields for m in members
    ):
        raise ValueError("a block's members share a kind, a namespace and index fields")
    digests = Digests()
    digests.added((api_version, kind), members)
    names = frozenset(key_of(m)[3] for m in members)
    block_id = next(_IDS)
    held = tuple(members)

    def load() -> Sequence[Manifest]:
        loads[block_id] += 1
        return held

    return Block(
        block_id,
        api_version,
        kind,
        namespace,
        fields,
        digests.of((api_version, kind)),
        f"note {block_id}",
        load,
        names.__contains__,
    )


def sealed_groups(
    objects: Iterable[Manifest],
    loads: Counter[int],
    parts: int = 1,
    labels: tuple[str, ...] = INDEXED_LABELS,
) -> list[Block]:
    """``objects`` sealed in blocks: those of one kind, namespace and index fields together,
    each such group cut in up to ``parts`` blocks of consecutive members."""
    index = Index(labels)
    groups: dict[tuple[object, ...], list[Manifest]] = {}
    for obj in objects:
        groups.setdefault((key_of(obj)[:3], frozenset(index.fields(obj))), []).append(obj)
    blocks = []
    for members in groups.values():
        size = -(-len(members) // parts)  # ceiling: at most ``parts`` blocks
        for start in range(0, len(members), size):
            blocks.append(sealed(members[start : start + size], loads, labels))
    return blocks


def members(block: Block, loads: Counter[int]) -> Sequence[Manifest]:
    """A block's members, read by a test: not counted in ``loads`` (a holder's reads are)."""
    found = block.load()
    loads[block.id] -= 1
    return found


class SealingCluster(FakeCluster):
    """A cache's view of a fake cluster whose first list hands the objects named one of
    ``sealed`` over as list-backed blocks, as they were listed."""

    def __init__(self, cluster: FakeCluster, sealed: frozenset[str], parts: int) -> None:
        self.__dict__.update(cluster.for_cache().__dict__)
        self.sealed = sealed
        self.parts = parts
        self.loads: Counter[int] = Counter()
        self.members: dict[int, Sequence[Manifest]] = {}
        """Each block handed over's members, as listed."""

    def list_blocks_at(
        self, api_version: str, kind: str
    ) -> tuple[int, Sequence[Manifest], Sequence[Block]]:
        cursor, items = self.list_at(api_version, kind)
        chosen = [o for o in items if o["metadata"]["name"] in self.sealed]
        blocks = sealed_groups(chosen, self.loads, self.parts)
        self.members |= {block.id: members(block, self.loads) for block in blocks}
        return cursor, [o for o in items if o["metadata"]["name"] not in self.sealed], blocks
