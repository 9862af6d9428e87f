"""A block: objects of one kind sealed together, held as one record until a reader needs them.

An Experiment's history is thousands of Trials that will never change again (finished, their
finalizer in place, their run objects gone), yet every holder of the cluster's objects (the fake
API server's store, the controller's watch cache) would read, decode, index and fingerprint each
of them whenever it starts, and every book derived from them (the trial ledger, the results a
suggestion service is given) would read each one back. A *block* is a set of such objects, sealed
together on disk by whoever knows they are settled (the embedded runtime, when a command ends),
that a holder keeps as one record: how many members it has, the ``core.digest.Digest`` of their
identities and versions, the index fields every member is under, and an opaque ``note`` its
sealer kept with it (what the books folded from the members). A holder answers for the members
without reading them while nothing asks for one, and reads them (``load``) the first time
something does: a list that would include them, a look-up of one by name (``holds`` says,
without reading the others, whether a name is a member), a garbage collection of their owner.
From then on it holds them one by one, as any other object.

The members are immutable while sealed: a write to one first reads its block (a writer reads
what it writes), and the store takes the written object out of the block (its count and digest
less that member). The digest's fingerprints are stable across processes (``core.digest``), so a
block's stored digest equals the sum of its members' however they are held: reading a block
changes no holder's digest. Pure: no I/O; ``load`` and ``holds`` are the holder's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from katib_resume.core.digest import Digest
from katib_resume.core.manifest import Manifest

Field = tuple[str, str]
"""An index field and its value (``core.object_index.Index.fields``)."""


@dataclass(frozen=True, slots=True, eq=False)
class Block:
    """Objects of one kind sealed together (see the module docstring); compared by identity."""

    id: int
    """Unique in its store, never reused."""
    api_version: str
    kind: str
    namespace: str
    """Every member's namespace (``""``: cluster-scoped)."""
    fields: frozenset[Field]
    """The index fields every member is under, exactly (``Index.fields`` of each member)."""
    digest: Digest
    """The members' count and the sum of their fingerprints."""
    note: str
    """What the sealer kept with the block, opaque to every holder."""
    load: Callable[[], Sequence[Manifest]]
    """The members ``digest`` counts, as they were when the block was handed out, whatever
    was written since (a store reads its block into memory to answer): a holder learns of a
    member's write as it learns of any other (a cache, from its watch), so reading the block
    never moves what it holds past what it was told."""
    holds: Callable[[str], bool]
    """Whether a member has this name (one ``load`` answers), without reading the members."""
    detail: Callable[[], str] = field(default=lambda: "")
    """What the sealer kept with the block besides its note, read when called: what a holder
    may need later but not when it opens (``note`` is read with the block's record)."""

    @property
    def size(self) -> int:
        return self.digest.size
